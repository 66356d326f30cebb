package clustertest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

var nsCounter atomic.Int32

// newNamespace creates a namespace of its own for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d", nsCounter.Add(1))
	require.NoError(t, k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

type runtimeOption func(*v1alpha1.ServingRuntimeSpec)

func withImage(image string) runtimeOption {
	return func(s *v1alpha1.ServingRuntimeSpec) { s.Containers[0].Image = image }
}

func withPriority(p int32) runtimeOption {
	return func(s *v1alpha1.ServingRuntimeSpec) { s.SupportedModelFormats[0].Priority = ptr.To(p) }
}

func runtimeSpec(format string, opts ...runtimeOption) v1alpha1.ServingRuntimeSpec {
	spec := v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: format, AutoSelect: ptr.To(true), Priority: ptr.To[int32](1)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
			Name: "kserve-container", Image: "example.com/" + format + "-server:1",
			Args: []string{"--model_name={{.Name}}", "--model_dir=/mnt/models"},
		}}},
	}
	for _, o := range opts {
		o(&spec)
	}
	return spec
}

// createClusterRuntime creates a ClusterServingRuntime removed at the test's end.
func createClusterRuntime(t *testing.T, name, format string, opts ...runtimeOption) *v1alpha1.ClusterServingRuntime {
	t.Helper()
	csr := &v1alpha1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: runtimeSpec(format, opts...)}
	require.NoError(t, k8s.Create(context.Background(), csr))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), csr) })
	return csr
}

func createServingRuntime(t *testing.T, ns, name, format string, opts ...runtimeOption) *v1alpha1.ServingRuntime {
	t.Helper()
	sr := &v1alpha1.ServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: runtimeSpec(format, opts...)}
	require.NoError(t, k8s.Create(context.Background(), sr))
	return sr
}

type isvcOption func(*v1beta1.InferenceService)

func withAnnotation(k, v string) isvcOption {
	return func(i *v1beta1.InferenceService) {
		if i.Annotations == nil {
			i.Annotations = map[string]string{}
		}
		i.Annotations[k] = v
	}
}

func withTransformer() isvcOption {
	return func(i *v1beta1.InferenceService) {
		i.Spec.Transformer = &v1beta1.TransformerSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "example.com/transformer:1"}}}}
	}
}

func withPredictor(f func(*v1beta1.PredictorSpec)) isvcOption {
	return func(i *v1beta1.InferenceService) { f(&i.Spec.Predictor) }
}

func createISVC(t *testing.T, ns, name, format string, opts ...isvcOption) *v1beta1.InferenceService {
	t.Helper()
	isvc := &v1beta1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
			ModelFormat:            v1beta1.ModelFormat{Name: format},
			PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://models/" + name)},
		}}},
	}
	for _, o := range opts {
		o(isvc)
	}
	require.NoError(t, k8s.Create(context.Background(), isvc))
	return isvc
}

func getISVC(t *testing.T, ns, name string) *v1beta1.InferenceService {
	t.Helper()
	isvc := &v1beta1.InferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, isvc))
	return isvc
}

// updateISVC re-reads the InferenceService, changes it and updates it,
// retrying on conflicts with the manager's status writes.
func updateISVC(t *testing.T, ns, name string, change func(*v1beta1.InferenceService)) {
	t.Helper()
	for range 10 {
		isvc := getISVC(t, ns, name)
		change(isvc)
		if err := k8s.Update(context.Background(), isvc); err == nil {
			return
		}
	}
	t.Fatalf("could not update %s/%s", ns, name)
}

func cond(isvc *v1beta1.InferenceService, t string) *metav1.Condition {
	return meta.FindStatusCondition(isvc.Status.Conditions, t)
}

// hasCondition reports whether the condition has the status and, when
// reason is not empty, the reason.
func hasCondition(isvc *v1beta1.InferenceService, t string, status metav1.ConditionStatus, reason string) bool {
	c := cond(isvc, t)
	return c != nil && c.Status == status && (reason == "" || c.Reason == reason)
}

func getDeployment(ns, name string) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	return dep, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dep)
}

// makeAvailable plays the Deployment controller: every replica updated,
// available and rolled out.
func makeAvailable(t *testing.T, ns, name string) {
	t.Helper()
	setDeploymentStatus(t, ns, name, true, true)
}

// createReadyISVC creates an InferenceService of a model of the format,
// plays the Deployment controller for its predictor and waits until it is
// Ready.
func createReadyISVC(t *testing.T, ns, name, format string, opts ...isvcOption) {
	t.Helper()
	createISVC(t, ns, name, format, opts...)
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, name+"-predictor") })
	makeAvailable(t, ns, name+"-predictor")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, name), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
}

func setDeploymentStatus(t *testing.T, ns, name string, isAvailable, rolledOut bool) {
	t.Helper()
	for range 10 {
		dep, err := getDeployment(ns, name)
		require.NoError(t, err)
		replicas := ptr.Deref(dep.Spec.Replicas, 1)
		availableStatus, progressReason := corev1.ConditionFalse, "ReplicaSetUpdated"
		if isAvailable {
			availableStatus = corev1.ConditionTrue
		}
		if rolledOut {
			progressReason = "NewReplicaSetAvailable"
		}
		updated, ready := replicas, replicas
		if !rolledOut {
			updated = 0
		}
		if !isAvailable {
			ready = 0
		}
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: availableStatus, Reason: "MinimumReplicas", Message: "availability"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: progressReason},
			},
		}
		if err := k8s.Status().Update(context.Background(), dep); err == nil {
			return
		}
	}
	t.Fatalf("could not set the status of Deployment %s/%s", ns, name)
}

func exists(obj client.Object, ns, name string) bool {
	return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj) == nil
}

// hasEvent reports whether an Event in ns has the reason and a note that
// contains the text.
func hasEvent(t *testing.T, ns, reason, text string) bool {
	t.Helper()
	events := &eventsv1.EventList{}
	require.NoError(t, k8s.List(context.Background(), events, client.InNamespace(ns)))
	for _, e := range events.Items {
		if e.Reason == reason && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}
