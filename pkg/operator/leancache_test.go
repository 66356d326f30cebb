package operator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
)

func TestLeanObject(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		{Manager: apply.FieldOwner, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}},
		{Manager: apply.FieldOwner, Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "m-predictor", Labels: map[string]string{"a": "b"}, ManagedFields: entries},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "x"}}},
		}},
		Status: appsv1.DeploymentStatus{AvailableReplicas: 1},
	}
	got, err := leanObject(dep.DeepCopy())
	assert.NoError(t, err)
	lean := got.(*appsv1.Deployment)
	assert.Equal(t, int32(2), *lean.Spec.Replicas, "replicas are read (the autoscaler handover)")
	assert.Equal(t, dep.Status, lean.Status, "the status is read")
	assert.Empty(t, lean.Spec.Template.Spec.Containers, "the pod template is not")
	assert.Len(t, lean.ManagedFields, 2, "Serval's Apply entry whole, and a marker of its Update entry")
	assert.NotNil(t, lean.ManagedFields[0].FieldsV1)
	assert.Nil(t, lean.ManagedFields[1].FieldsV1)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}, ManagedFields: entries},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}},
			PodIP: "10.0.0.1"},
	}
	got, err = leanObject(pod)
	assert.NoError(t, err)
	leanP := got.(*corev1.Pod)
	assert.Equal(t, pod.Labels, leanP.Labels)
	assert.Equal(t, pod.Status.ContainerStatuses, leanP.Status.ContainerStatuses)
	assert.Empty(t, leanP.Spec.Containers)
	assert.Empty(t, leanP.Status.PodIP)
	assert.Empty(t, leanP.ManagedFields)

	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "m-predictor", Generation: 2, Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{apply.HashAnnotation: "h"}, ManagedFields: entries}
	}
	svc := &corev1.Service{ObjectMeta: meta(), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.2", Ports: []corev1.ServicePort{{Port: 80}}}}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta(), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2}}
	ing := &networkingv1.Ingress{ObjectMeta: meta(), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "m.example.com"}}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}}}}}
	for _, obj := range []metav1.Object{svc, hpa, ing} {
		got, err := leanObject(obj)
		assert.NoError(t, err)
		m := got.(metav1.Object)
		assert.Equal(t, "m-predictor", m.GetName())
		assert.Equal(t, int64(2), m.GetGeneration(), "the generation is read (the skip cache)")
		assert.Equal(t, meta().Labels, m.GetLabels())
		assert.Equal(t, meta().Annotations, m.GetAnnotations(), "the applied hash is read")
		assert.Len(t, m.GetManagedFields(), 1, "a marker of Serval's Update entry")
	}
	assert.Empty(t, svc.Spec.Ports, "a Service's spec is not read")
	assert.Zero(t, hpa.Spec.MaxReplicas, "an autoscaler's spec is not read")
	assert.Zero(t, hpa.Status.CurrentReplicas, "nor its status")
	assert.Empty(t, ing.Spec.Rules, "an Ingress's rules are not read")
	assert.Equal(t, "1.2.3.4", ing.Status.LoadBalancer.Ingress[0].IP, "its address is (requireLoadBalancerAddress)")
}

// TestLeanObjectDropsKubectlsCopyOfTheSpec: InferenceServices and graphs
// are cached without kubectl's last-applied annotation, and keep the others.
func TestLeanObjectDropsKubectlsCopyOfTheSpec(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "m", Annotations: map[string]string{
			corev1.LastAppliedConfigAnnotation: `{"spec":{}}`, "team": "search"}}
	}
	for _, obj := range []metav1.Object{
		&v1beta1.InferenceService{ObjectMeta: meta()},
		&v1alpha1.InferenceGraph{ObjectMeta: meta()},
	} {
		got, err := leanObject(obj)
		assert.NoError(t, err)
		assert.Equal(t, map[string]string{"team": "search"}, got.(metav1.Object).GetAnnotations(), "%T", obj)
	}
	// A kind Serval may write back whole keeps it.
	cm := &corev1.ConfigMap{ObjectMeta: meta()}
	got, err := leanObject(cm)
	assert.NoError(t, err)
	assert.Contains(t, got.(metav1.Object).GetAnnotations(), corev1.LastAppliedConfigAnnotation)
}
