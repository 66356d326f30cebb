package standard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestStateOf(t *testing.T) {
	dep := func(gen, observed int64, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, Conditions: conds},
		}
	}
	availableCond := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}
	unavailable := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Message: "Deployment does not have minimum availability."}
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
	quota := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
		Message: `pods "iris-predictor-abc" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4`}
	const quotaMessage = `the Deployment cannot create its pods (FailedCreate): pods "iris-predictor-abc" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4`
	crashing := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "kserve-container", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	tests := []struct {
		name                                string
		dep                                 *appsv1.Deployment
		pods                                []corev1.Pod
		available, rolledOut, rolloutFailed bool
		notAvailableMessage, rolloutMessage string
	}{
		{"no Deployment yet", nil, nil, false, false, false, NoReplicaYet, "the latest spec is rolling out"},
		{"no condition yet", dep(1, 1, 1, 0, 0), nil, false, false, false, NoReplicaYet, "the latest spec is rolling out"},
		{"available and rolled out", dep(2, 2, 2, 2, 2, availableCond), nil, true, true, false, "", ""},
		{"unavailable", dep(1, 1, 1, 1, 0, unavailable), nil, false, false, false, NoReplicaYet, "the latest spec is rolling out"},
		{"a scale-up is not an outage: one old replica serves", dep(2, 2, 3, 3, 1, unavailable), nil, true, false, false, "", "the latest spec is rolling out"},
		{"scaled to zero", dep(1, 1, 0, 0, 0, availableCond), nil, false, true, false, "the Deployment is scaled to zero", ""},
		{"old pods serve a new spec not observed yet", dep(3, 2, 1, 1, 1, availableCond), nil, true, false, false, "", "the latest spec is rolling out"},
		{"old pods serve while a new one crashes", dep(2, 2, 1, 0, 1, availableCond), []corev1.Pod{crashing}, true, false, true, "", "pod p: container kserve-container: CrashLoopBackOff"},
		{"deadline exceeded", dep(2, 2, 1, 0, 1, availableCond, deadline), nil, true, false, true, "", "the rollout exceeded its progress deadline"},
		{"no pod can be created: a quota", dep(1, 1, 1, 0, 0, unavailable, quota), nil, false, false, true, quotaMessage, quotaMessage},
		{"old pods serve while the new ones cannot be created", dep(2, 2, 1, 0, 1, availableCond, quota), nil, true, false, true, "", quotaMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StateOf(tt.dep, tt.pods)
			assert.Equal(t, tt.available, st.Available, "available")
			assert.Equal(t, tt.rolledOut, st.RolledOut, "rolled out")
			assert.Equal(t, tt.rolloutFailed, st.RolloutFailed, "rollout failed")
			assert.Equal(t, tt.notAvailableMessage, st.NotAvailableMessage)
			assert.Equal(t, tt.rolloutMessage, st.RolloutMessage)
		})
	}
}

// TestHeldAtZero: a component that scales from zero serves at zero and
// while its first replica starts; a failing replica makes it unavailable.
func TestHeldAtZero(t *testing.T) {
	dep := func(replicas, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{Replicas: replicas, AvailableReplicas: available}}
	}
	crashing := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "kserve-container", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}
	tests := []struct {
		name                    string
		dep                     *appsv1.Deployment
		pods                    []corev1.Pod
		available, scaledToZero bool
	}{
		{"at zero", dep(0, 0), nil, true, true},
		{"a cold start: held until the replica is ready", dep(1, 0), nil, true, false},
		{"a cold start that fails", dep(1, 0), []corev1.Pod{crashing}, false, false},
		{"running", dep(2, 2), nil, true, false},
		{"no Deployment yet", nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StateOf(tt.dep, tt.pods)
			heldAtZero(&st, tt.dep)
			assert.Equal(t, tt.available, st.Available, "available")
			assert.Equal(t, tt.scaledToZero, st.ScaledToZero, "scaled to zero")
		})
	}
}
