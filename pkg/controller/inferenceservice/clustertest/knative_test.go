package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

func getKsvc(ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("serving.knative.dev/v1")
	u.SetKind("Service")
	return u, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
}

func ksvcObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("serving.knative.dev/v1")
	u.SetKind("Service")
	return u
}

// setKnativeFeatures writes Knative's config-features, as a platform team
// would; the test's end removes it.
func setKnativeFeatures(t *testing.T, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	if !exists(&corev1.Namespace{}, "", "knative-serving") {
		require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "knative-serving"}}))
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config-features", Namespace: "knative-serving"}, Data: data}
	if exists(&corev1.ConfigMap{}, "knative-serving", "config-features") {
		require.NoError(t, k8s.Update(ctx, cm))
	} else {
		require.NoError(t, k8s.Create(ctx, cm))
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
}

// playKnative writes the status Knative would write for a ready revision.
func playKnative(t *testing.T, ns, name, revision string) {
	t.Helper()
	ksvc, err := getKsvc(ns, name)
	require.NoError(t, err)
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	ksvc.Object["status"] = map[string]any{
		"observedGeneration":        ksvc.GetGeneration(),
		"url":                       "http://" + name + "." + ns + ".knative.example.com",
		"latestReadyRevisionName":   revision,
		"latestCreatedRevisionName": revision,
		"conditions":                []any{cond("Ready"), cond("ConfigurationsReady"), cond("RoutesReady")},
		"traffic":                   []any{map[string]any{"revisionName": revision, "latestRevision": true, "percent": int64(100)}},
	}
	require.NoError(t, k8s.Status().Update(context.Background(), ksvc))
}

func TestKnativeMode(t *testing.T) {
	// Without Istio's CRD the Knative Service's own URL is the URL.
	waitCRDGone(t, virtualServiceCRD)
	ns := newNamespace(t)
	createClusterRuntime(t, "kn-sklearn", "sklearn-kn")
	createISVC(t, ns, "kn", "sklearn-kn", withAnnotation(v1beta1.DeploymentModeAnnotation, "Serverless"),
		withPredictor(func(p *v1beta1.PredictorSpec) {
			p.MinReplicas = ptr.To[int32](0)
			p.MaxReplicas = 4
			p.ScaleMetric = ptr.To(v1beta1.ScaleMetricConcurrency)
			p.ScaleTarget = ptr.To[int32](10)
			p.ContainerConcurrency = ptr.To[int64](20)
		}))
	// Knative's CRDs cannot be deleted here (their conversion webhook points
	// at a Knative installation that does not exist), so they are installed
	// once; a repeated run (-count) starts with them present.
	if !exists(&apiextensionsv1.CustomResourceDefinition{}, "", "services.serving.knative.dev") {
		eventually(t, "MissingCRD without Knative", func() bool {
			return hasCondition(getISVC(t, ns, "kn"), v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonMissingCRD)
		})
		assert.Contains(t, cond(getISVC(t, ns, "kn"), v1beta1.ConditionReady).Message, "services.serving.knative.dev is not installed")
		installKnative(t)
	}
	// Knative leaves init containers off by default, and the storage
	// initializer is one: the predictor says which key to set, and goes on
	// once it is set.
	eventually(t, "the feature-flag condition", func() bool {
		return hasCondition(getISVC(t, ns, "kn"), v1beta1.ConditionPredictorReady, metav1.ConditionFalse, v1beta1.ReasonKnativeFeatureDisabled)
	})
	assert.Equal(t, "Knative would reject the predictor's pod as ConfigMap knative-serving/config-features stands: "+
		"init containers storage-initializer needs kubernetes.podspec-init-containers: enabled",
		cond(getISVC(t, ns, "kn"), v1beta1.ConditionPredictorReady).Message)
	assert.False(t, exists(ksvcObject(), ns, "kn-predictor"), "nothing Knative would reject is applied")
	setKnativeFeatures(t, map[string]string{"kubernetes.podspec-init-containers": "enabled"})
	eventually(t, "the Knative Service", func() bool { _, err := getKsvc(ns, "kn-predictor"); return err == nil })
	assert.False(t, exists(&appsv1.Deployment{}, ns, "kn-predictor"), "no Deployment in Knative mode")

	ksvc, _ := getKsvc(ns, "kn-predictor")
	annotations, _, _ := unstructured.NestedStringMap(ksvc.Object, "spec", "template", "metadata", "annotations")
	assert.Equal(t, map[string]string{"autoscaling.knative.dev/class": "kpa.autoscaling.knative.dev", "autoscaling.knative.dev/min-scale": "0",
		"autoscaling.knative.dev/max-scale": "4", "autoscaling.knative.dev/metric": "concurrency", "autoscaling.knative.dev/target": "10",
		"serving.serval.dev/deploymentMode": "Knative"}, annotations, "the mode alias normalised in memory")
	cc, _, _ := unstructured.NestedInt64(ksvc.Object, "spec", "template", "spec", "containerConcurrency")
	assert.Equal(t, int64(20), cc)
	assert.Equal(t, "kn", ksvc.GetLabels()[v1beta1.InferenceServiceLabel])

	playKnative(t, ns, "kn-predictor", "kn-predictor-00001")
	eventually(t, "Ready from Knative's status", func() bool {
		return hasCondition(getISVC(t, ns, "kn"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	i := getISVC(t, ns, "kn")
	assert.Equal(t, "http://kn-predictor."+ns+".knative.example.com", i.Status.URL)
	assert.Equal(t, v1beta1.Knative, i.Status.DeploymentMode)
	p := i.Status.Components[v1beta1.PredictorComponent]
	assert.Equal(t, "kn-predictor-00001", p.LatestRolledoutRevision)
	assert.Equal(t, "kn-predictor-00001", p.LatestReadyRevision)

	updateISVC(t, ns, "kn", func(i *v1beta1.InferenceService) { i.Spec.Predictor.CanaryTrafficPercent = ptr.To[int64](20) })
	eventually(t, "the canary split", func() bool {
		ksvc, err := getKsvc(ns, "kn-predictor")
		if err != nil {
			return false
		}
		traffic, _, _ := unstructured.NestedSlice(ksvc.Object, "spec", "traffic")
		if len(traffic) != 2 {
			return false
		}
		latest, prev := traffic[0].(map[string]any), traffic[1].(map[string]any)
		return latest["percent"] == int64(20) && prev["revisionName"] == "kn-predictor-00001" && prev["percent"] == int64(80)
	})

	before := reconciled.of(ns, "kn")
	updateISVC(t, ns, "kn", func(i *v1beta1.InferenceService) {
		i.Annotations[v1beta1.DeploymentModeAnnotation] = "Standard"
	})
	waitReconciled(t, ns, "kn", before)
	consistently(t, "the mode stays Knative once deployed, autoscaler included", time.Second, func() bool {
		ksvc, err := getKsvc(ns, "kn-predictor")
		if err != nil {
			return false
		}
		class, _, _ := unstructured.NestedString(ksvc.Object, "spec", "template", "metadata", "annotations", "autoscaling.knative.dev/class")
		i := getISVC(t, ns, "kn")
		return i.Status.DeploymentMode == v1beta1.Knative && !exists(&appsv1.Deployment{}, ns, "kn-predictor") &&
			class == "kpa.autoscaling.knative.dev" && hasCondition(i, v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
}
