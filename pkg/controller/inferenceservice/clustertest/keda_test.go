package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

const scaledObjectCRD = "scaledobjects.keda.sh"

func scaledObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("keda.sh/v1alpha1")
	u.SetKind("ScaledObject")
	return u
}

func getScaledObject(ns, name string) (*unstructured.Unstructured, error) {
	u := scaledObject()
	return u, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
}

// playKEDA writes the status KEDA's operator would write once it scales.
func playKEDA(t *testing.T, ns, name string) {
	t.Helper()
	for range 10 {
		so, err := getScaledObject(ns, name)
		require.NoError(t, err)
		so.Object["status"] = map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ScaledObject is defined correctly and is ready for scaling"},
			map[string]any{"type": "Active", "status": "True"},
		}}
		if k8s.Status().Update(context.Background(), so) == nil {
			return
		}
	}
	t.Fatalf("could not set the status of ScaledObject %s/%s", ns, name)
}

// TestKEDA: autoscalerClass keda without KEDA's CRD says so; the CRD
// installed late is picked up; the ScaledObject takes the replicas over
// from Serval without dropping them, readiness waits for KEDA, and
// switching classes prunes the other autoscaler.
func TestKEDA(t *testing.T) {
	waitCRDGone(t, scaledObjectCRD)
	ns := newNamespace(t)
	createClusterRuntime(t, "keda-sklearn", "sklearn-keda")
	createISVC(t, ns, "scaled", "sklearn-keda",
		withAnnotation(v1beta1.AutoscalerClassAnnotation, "none"),
		withPredictor(func(p *v1beta1.PredictorSpec) { p.MinReplicas = ptr.To[int32](3); p.MaxReplicas = 6 }))
	eventually(t, "3 replicas set by Serval", func() bool {
		dep, err := getDeployment(ns, "scaled-predictor")
		return err == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 3
	})

	updateISVC(t, ns, "scaled", func(i *v1beta1.InferenceService) {
		i.Annotations[v1beta1.AutoscalerClassAnnotation] = "keda"
		i.Spec.Predictor.AutoScaling = &apiextensionsv1.JSON{Raw: []byte(`{"metrics":[{"type":"External","external":{"metric":` +
			`{"backend":"prometheus","serverAddress":"http://prometheus:9090","query":"sum(rate(requests[1m]))"},"target":{"type":"Value","value":"5"}}}]}`)}
	})
	eventually(t, "MissingCRD naming KEDA", func() bool {
		c := cond(getISVC(t, ns, "scaled"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == v1beta1.ReasonMissingCRD && strings.Contains(c.Message,
			"the CRD scaledobjects.keda.sh is not installed, and the predictor needs a ScaledObject; install KEDA")
	})

	paths, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	installCRDsForTest(t, paths)
	eventually(t, "the ScaledObject once the CRD exists", func() bool { _, err := getScaledObject(ns, "scaled-predictor"); return err == nil })
	so, _ := getScaledObject(ns, "scaled-predictor")
	minCount, _, _ := unstructured.NestedInt64(so.Object, "spec", "minReplicaCount")
	maxCount, _, _ := unstructured.NestedInt64(so.Object, "spec", "maxReplicaCount")
	assert.Equal(t, []int64{3, 6}, []int64{minCount, maxCount})
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	require.Len(t, triggers, 1)
	assert.Equal(t, "prometheus", triggers[0].(map[string]any)["type"])
	assert.Equal(t, metav1.GetControllerOf(so).Name, "scaled")

	// The replicas are handed over, not reset to the default of 1.
	dep, err := getDeployment(ns, "scaled-predictor")
	require.NoError(t, err)
	assert.Equal(t, int32(3), *dep.Spec.Replicas)
	for _, mf := range dep.ManagedFields {
		if mf.Manager == "serval-manager" {
			assert.NotContains(t, string(mf.FieldsV1.Raw), `"f:replicas"`, "serval-manager released replicas to KEDA")
		}
	}

	makeAvailable(t, ns, "scaled-predictor")
	eventually(t, "not Ready until KEDA scales", func() bool {
		c := cond(getISVC(t, ns, "scaled"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "KEDA does not scale the Deployment yet")
	})
	playKEDA(t, ns, "scaled-predictor")
	eventually(t, "Ready once the ScaledObject is", func() bool {
		return hasCondition(getISVC(t, ns, "scaled"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})

	updateISVC(t, ns, "scaled", func(i *v1beta1.InferenceService) {
		i.Annotations[v1beta1.AutoscalerClassAnnotation] = "hpa"
		i.Spec.Predictor.AutoScaling = nil
	})
	eventually(t, "the HPA, and the ScaledObject pruned", func() bool {
		_, err := getScaledObject(ns, "scaled-predictor")
		return exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "scaled-predictor") && err != nil
	})
	updateISVC(t, ns, "scaled", func(i *v1beta1.InferenceService) { i.Annotations[v1beta1.AutoscalerClassAnnotation] = "keda" })
	eventually(t, "the ScaledObject, and the HPA pruned", func() bool {
		_, err := getScaledObject(ns, "scaled-predictor")
		return err == nil && !exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "scaled-predictor")
	})
	consistently(t, "the replicas kept", 500*time.Millisecond, func() bool {
		dep, err := getDeployment(ns, "scaled-predictor")
		return err == nil && *dep.Spec.Replicas == 3
	})
}

// TestScaleFromZero: with the activator installed, a predictor that KEDA
// scales to zero gets the activator's trigger and a Service the activator
// recognises (its label, and the route's hosts); at zero it stays Ready,
// PredictorScaledToZero says since when, and a replica that cannot start
// makes it unready with the pod's reason.
func TestScaleFromZero(t *testing.T) {
	paths, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	installCRDsForTest(t, paths)
	setConfig(t, map[string]string{"activator.scalerAddress": "serval-activator.serval-system.svc.cluster.local:9091"})
	ns := newNamespace(t)
	createClusterRuntime(t, "zero-sklearn", "sklearn-zero")
	createISVC(t, ns, "idle", "sklearn-zero", withAnnotation(v1beta1.AutoscalerClassAnnotation, "keda"),
		withPredictor(func(p *v1beta1.PredictorSpec) { p.MinReplicas = ptr.To[int32](0); p.MaxReplicas = 3 }))

	eventually(t, "the activator's trigger", func() bool {
		so, err := getScaledObject(ns, "idle-predictor")
		if err != nil {
			return false
		}
		triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
		last, _ := triggers[len(triggers)-1].(map[string]any)
		meta, _ := last["metadata"].(map[string]any)
		return last["type"] == "external-push" && meta["scalerAddress"] == "serval-activator.serval-system.svc.cluster.local:9091" &&
			meta["service"] == "idle-predictor"
	})
	svc := &corev1.Service{}
	require.True(t, exists(svc, ns, "idle-predictor"))
	assert.Equal(t, "true", svc.Labels[v1beta1.ScaleFromZeroLabel])
	assert.Contains(t, svc.Annotations[v1beta1.HostsAnnotation], "idle-"+ns+".example.com")

	// KEDA scaled it to zero.
	eventually(t, "KEDA's write of 0 replicas", func() bool {
		dep, err := getDeployment(ns, "idle-predictor")
		if err != nil {
			return false
		}
		dep.Spec.Replicas = ptr.To[int32](0)
		return k8s.Update(context.Background(), dep, client.FieldOwner("keda")) == nil
	})
	setDeploymentStatus(t, ns, "idle-predictor", true, true)
	playKEDA(t, ns, "idle-predictor")
	eventually(t, "Ready at zero, and scaled to zero", func() bool {
		isvc := getISVC(t, ns, "idle")
		return hasCondition(isvc, v1beta1.ConditionReady, metav1.ConditionTrue, "") &&
			hasCondition(isvc, v1beta1.ConditionPredictorScaledToZero, metav1.ConditionTrue, v1beta1.ReasonNoDemand)
	})
	quiesce(t, ns)
	before := len(writes.since(0, ns))
	consistently(t, "nothing written while idle at zero", 2*time.Second, func() bool { return len(writes.since(0, ns)) == before })

	// A request came: KEDA asks for a replica, whose image does not pull.
	eventually(t, "KEDA's write of 1 replica", func() bool {
		dep, err := getDeployment(ns, "idle-predictor")
		if err != nil {
			return false
		}
		dep.Spec.Replicas = ptr.To[int32](1)
		return k8s.Update(context.Background(), dep, client.FieldOwner("keda")) == nil
	})
	setDeploymentStatus(t, ns, "idle-predictor", false, false)
	eventually(t, "Ready while the replica starts, no longer at zero", func() bool {
		isvc := getISVC(t, ns, "idle")
		return hasCondition(isvc, v1beta1.ConditionReady, metav1.ConditionTrue, "") && cond(isvc, v1beta1.ConditionPredictorScaledToZero) == nil
	})
	createPodPullingNothing(t, ns, "idle-predictor-1", "idle")
	eventually(t, "a cold start that fails says why", func() bool {
		c := cond(getISVC(t, ns, "idle"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "ImagePullBackOff")
	})
}
