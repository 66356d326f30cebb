package clustertest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

var nsCounter atomic.Int32

func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("g%d", nsCounter.Add(1))
	require.NoError(t, k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

// createRuntime installs a cluster runtime for the sklearn format once.
var runtimeOnce atomic.Bool

func createRuntime(t *testing.T) {
	t.Helper()
	if runtimeOnce.Swap(true) {
		return
	}
	rt := &v1alpha1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "sklearn"}, Spec: v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "sklearn", AutoSelect: ptr.To(true)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "example.com/sklearn:1"}}},
	}}
	require.NoError(t, k8s.Create(context.Background(), rt))
}

func createISVC(t *testing.T, ns, name string) {
	t.Helper()
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
			ModelFormat:            v1beta1.ModelFormat{Name: "sklearn"},
			PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://models/" + name)},
		}}}}
	require.NoError(t, k8s.Create(context.Background(), isvc))
}

func getGraph(t *testing.T, ns, name string) *v1alpha1.InferenceGraph {
	t.Helper()
	ig := &v1alpha1.InferenceGraph{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, ig))
	return ig
}

func condition(ig *v1alpha1.InferenceGraph, t string) metav1.Condition {
	if c := meta.FindStatusCondition(ig.Status.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// makeAvailable plays the Deployment controller.
func makeAvailable(t *testing.T, ns, name string, available bool) {
	t.Helper()
	for range 10 {
		dep := &appsv1.Deployment{}
		require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dep))
		status, ready := corev1.ConditionFalse, int32(0)
		if available {
			status, ready = corev1.ConditionTrue, 1
		}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: status, Reason: "MinimumReplicas"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			}}
		if k8s.Status().Update(context.Background(), dep) == nil {
			return
		}
	}
	t.Fatalf("could not set the status of %s/%s", ns, name)
}

// TestGraphReadyOnlyWithItsServices: the router runs the resolved graph;
// the graph turns Ready only when the router and every InferenceService it
// names are; deleting one makes it NotReady, naming it; an unchanged graph
// costs no writes.
func TestGraphReadyOnlyWithItsServices(t *testing.T) {
	ns := newNamespace(t)
	createRuntime(t)
	createISVC(t, ns, "classifier")
	createISVC(t, ns, "breeds")
	ig := &v1alpha1.InferenceGraph{ObjectMeta: metav1.ObjectMeta{Name: "pets", Namespace: ns}, Spec: v1alpha1.InferenceGraphSpec{
		Nodes: map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{
			{StepName: "classify", InferenceTarget: v1alpha1.InferenceTarget{ServiceName: "classifier"}},
			{StepName: "breed", InferenceTarget: v1alpha1.InferenceTarget{ServiceName: "breeds"}, Data: v1alpha1.DataResponse},
		}}},
	}}
	require.NoError(t, k8s.Create(context.Background(), ig))

	dep := &appsv1.Deployment{}
	eventually(t, "the router's Deployment, Service and HPA", func() bool {
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "pets"}, dep) == nil &&
			k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "pets"}, &corev1.Service{}) == nil &&
			k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "pets"}, &autoscalingv2.HorizontalPodAutoscaler{}) == nil
	})
	ref := metav1.GetControllerOf(dep)
	require.NotNil(t, ref)
	assert.Equal(t, "InferenceGraph", ref.Kind)
	c := dep.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "example.com/serval:test", c.Image)
	assert.Contains(t, c.Args[0], `"serviceUrl":"http://classifier-predictor.`+ns+`.svc.cluster.local/v1/models/classifier:predict"`)
	assert.Contains(t, c.Args[0], `"serviceUrl":"http://breeds-predictor.`+ns+`.svc.cluster.local/v1/models/breeds:predict"`)

	eventually(t, "InferenceServicesReady False, naming both", func() bool {
		c := condition(getGraph(t, ns, "pets"), v1alpha1.GraphServicesReady)
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "breeds (") && strings.Contains(c.Message, "classifier (")
	})
	makeAvailable(t, ns, "pets", true)
	eventually(t, "RouterReady True", func() bool {
		return condition(getGraph(t, ns, "pets"), v1alpha1.GraphRouterReady).Status == metav1.ConditionTrue
	})
	assert.Equal(t, metav1.ConditionFalse, condition(getGraph(t, ns, "pets"), v1beta1.ConditionReady).Status, "not Ready while its InferenceServices are not")

	makeAvailable(t, ns, "classifier-predictor", true)
	eventually(t, "only breeds named", func() bool {
		c := condition(getGraph(t, ns, "pets"), v1alpha1.GraphServicesReady)
		return strings.HasPrefix(c.Message, "not Ready: breeds (") && !strings.Contains(c.Message, "classifier")
	})
	makeAvailable(t, ns, "breeds-predictor", true)
	eventually(t, "the graph Ready", func() bool {
		return condition(getGraph(t, ns, "pets"), v1beta1.ConditionReady).Status == metav1.ConditionTrue
	})
	got := getGraph(t, ns, "pets")
	assert.Equal(t, "http://pets-"+ns+".example.com", got.Status.URL)
	assert.Equal(t, "http://pets."+ns+".svc.cluster.local", got.Status.Address.URL)
	assert.Equal(t, v1beta1.Standard, got.Status.DeploymentMode)
	assert.Equal(t, metav1.ConditionTrue, condition(got, v1alpha1.GraphIngressReady).Status)

	// Steady state: a config change that changes nothing brings a
	// reconcile of every graph, and no write.
	settle(t, ns)
	before, reconciled := len(writes.Into(ns)), reconciles.Of("inferencegraph", ns, "pets")
	touchConfig(t)
	eventually(t, "a reconcile of the graph after the config change", func() bool { return reconciles.Of("inferencegraph", ns, "pets") > reconciled })
	settle(t, ns)
	assert.Empty(t, writes.Into(ns)[before:], "an unchanged graph is not written to")

	require.NoError(t, k8s.Delete(context.Background(), &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: "breeds", Namespace: ns}}))
	eventually(t, "NotReady, naming the deleted InferenceService", func() bool {
		c := condition(getGraph(t, ns, "pets"), v1beta1.ConditionReady)
		return c.Status == metav1.ConditionFalse && c.Reason == "InferenceServicesNotReady" && c.Message == "not Ready: breeds (not found)"
	})
}

// settle waits until no write into ns happened for a second.
func settle(t *testing.T, ns string) {
	t.Helper()
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second), "writes into %s did not settle", ns)
}

var touches atomic.Int32

// touchConfig writes serval-config with a key at its default value: a
// change of the ConfigMap that changes no setting.
func touchConfig(t *testing.T) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.ConfigMapName, Namespace: managerNamespace}}
	err := k8s.Get(context.Background(), types.NamespacedName{Namespace: managerNamespace, Name: config.ConfigMapName}, cm)
	if err != nil {
		cm.Data = map[string]string{"router.cpuRequest": config.Defaults["router.cpuRequest"]}
		require.NoError(t, k8s.Create(context.Background(), cm))
		return
	}
	cm.Annotations = map[string]string{"touched": fmt.Sprint(touches.Add(1))}
	require.NoError(t, k8s.Update(context.Background(), cm))
}

// TestInvalidGraphWithoutTheWebhook: a graph that never passed the webhook
// gets a condition that says what is wrong, and no router.
func TestInvalidGraphWithoutTheWebhook(t *testing.T) {
	ns := newNamespace(t)
	ig := &v1alpha1.InferenceGraph{ObjectMeta: metav1.ObjectMeta{Name: "loop", Namespace: ns}, Spec: v1alpha1.InferenceGraphSpec{
		Nodes: map[string]v1alpha1.InferenceRouter{
			"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{{InferenceTarget: v1alpha1.InferenceTarget{NodeName: "a"}}}},
			"a":    {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{{InferenceTarget: v1alpha1.InferenceTarget{NodeName: "root"}}}},
		}}}
	require.NoError(t, k8s.Create(context.Background(), ig))
	eventually(t, "Ready False with InvalidSpec", func() bool {
		c := condition(getGraph(t, ns, "loop"), v1beta1.ConditionReady)
		return c.Reason == v1beta1.ReasonInvalidSpec && strings.Contains(c.Message, "the nodes form a cycle (a -> root -> a)")
	})
	assert.Error(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "loop"}, &appsv1.Deployment{}), "no router for an invalid graph")
}
