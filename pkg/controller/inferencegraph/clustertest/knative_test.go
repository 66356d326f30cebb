package clustertest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestKnativeGraph: a graph in Knative mode reports the missing Knative
// CRD, gets its Knative Service once the CRD appears (the watch in the
// graphs' own cache starts then), and turns Ready from Knative's status,
// at the Knative Service's URL.
func TestKnativeGraph(t *testing.T) {
	ns := newNamespace(t)
	ig := &v1alpha1.InferenceGraph{
		ObjectMeta: metav1.ObjectMeta{Name: "kn-graph", Namespace: ns, Annotations: map[string]string{v1beta1.DeploymentModeAnnotation: "Serverless"}},
		Spec: v1alpha1.InferenceGraphSpec{Nodes: map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble,
			Steps: []v1alpha1.InferenceStep{{StepName: "a", InferenceTarget: v1alpha1.InferenceTarget{ServiceURL: "http://a.example.com/v1/models/a:predict"}}}}}},
	}
	require.NoError(t, k8s.Create(context.Background(), ig))
	eventually(t, "MissingCRD without Knative", func() bool {
		c := condition(getGraph(t, ns, "kn-graph"), v1beta1.ConditionReady)
		return c.Reason == v1beta1.ReasonMissingCRD && strings.Contains(c.Message, "services.serving.knative.dev is not installed")
	})

	paths, err := testenv.UpstreamCRDPathsOf(testenv.Knative)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	require.NoError(t, err)
	ksvc := &unstructured.Unstructured{}
	ksvc.SetAPIVersion("serving.knative.dev/v1")
	ksvc.SetKind("Service")
	eventually(t, "the router's Knative Service", func() bool {
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "kn-graph"}, ksvc) == nil
	})
	assert.Equal(t, "kn-graph", ksvc.GetLabels()[v1alpha1.InferenceGraphLabel])
	assert.Error(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "kn-graph"}, &appsv1.Deployment{}), "no Deployment in Knative mode")

	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	ksvc.Object["status"] = map[string]any{
		"observedGeneration": ksvc.GetGeneration(), "url": "http://kn-graph." + ns + ".knative.example.com",
		"latestReadyRevisionName": "kn-graph-00001", "latestCreatedRevisionName": "kn-graph-00001",
		"conditions": []any{cond("Ready"), cond("ConfigurationsReady"), cond("RoutesReady")},
		"traffic":    []any{map[string]any{"revisionName": "kn-graph-00001", "latestRevision": true, "percent": int64(100)}},
	}
	require.NoError(t, k8s.Status().Update(context.Background(), ksvc))
	eventually(t, "Ready from Knative's status", func() bool {
		return condition(getGraph(t, ns, "kn-graph"), v1beta1.ConditionReady).Status == metav1.ConditionTrue
	})
	got := getGraph(t, ns, "kn-graph")
	assert.Equal(t, "http://kn-graph."+ns+".knative.example.com", got.Status.URL)
	assert.Equal(t, v1beta1.Knative, got.Status.DeploymentMode)
}
