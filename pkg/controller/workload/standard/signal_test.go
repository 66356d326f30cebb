package standard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func TestDeploymentSignal(t *testing.T) {
	dep := func(mutate func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
		d.Status.ObservedGeneration = 1
		mutate(d)
		return d
	}
	created := dep(func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 0 })
	counted := dep(func(d *appsv1.Deployment) { d.Status.Replicas, d.Status.UpdatedReplicas = 1, 1 })
	ready := dep(func(d *appsv1.Deployment) {
		d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas = 1, 1, 1
	})
	available := dep(func(d *appsv1.Deployment) {
		d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1, 1
	})
	stuck := dep(func(d *appsv1.Deployment) {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	})
	refused := dep(func(d *appsv1.Deployment) {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "quota"}}
	})
	assert.NotEqual(t, DeploymentSignal(created), DeploymentSignal(refused), "pods that cannot be created: news")
	assert.Equal(t, DeploymentSignal(created), DeploymentSignal(counted), "the controller counting replicas changes nothing Serval reports")
	assert.Equal(t, DeploymentSignal(counted), DeploymentSignal(ready), "ready but not yet available: the same")
	assert.NotEqual(t, DeploymentSignal(ready), DeploymentSignal(available), "a replica available: news")
	assert.NotEqual(t, DeploymentSignal(created), DeploymentSignal(stuck), "a stuck rollout: news")
	assert.Empty(t, DeploymentSignal(&appsv1.StatefulSet{}), "not a Deployment")
}

func TestScaledObjectSignal(t *testing.T) {
	so := func(status map[string]any) *unstructured.Unstructured {
		u := ScaledObjectKind.New().(*unstructured.Unstructured)
		u.Object["status"] = status
		return u
	}
	readyAt := func(lastActive string) *unstructured.Unstructured {
		return so(map[string]any{"lastActiveTime": lastActive, "conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady"},
			map[string]any{"type": "Active", "status": "True", "reason": "ScalerActive"}}})
	}
	failing := so(map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "ScaledObjectCheckFailed", "message": "no scaler"}}})
	assert.Equal(t, scaledObjectSignal(readyAt("2026-12-02T10:00:00Z")), scaledObjectSignal(readyAt("2026-12-02T10:00:30Z")),
		"KEDA's poll moving the last active time changes nothing Serval reports")
	assert.NotEqual(t, scaledObjectSignal(readyAt("2026-12-02T10:00:00Z")), scaledObjectSignal(failing), "Ready lost: news")
	assert.NotEqual(t, scaledObjectSignal(so(nil)), scaledObjectSignal(failing), "the first report: news")
	assert.Empty(t, scaledObjectSignal(&appsv1.Deployment{}), "not a ScaledObject")
}
