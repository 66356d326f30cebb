package workload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFirstPodProblem(t *testing.T) {
	pod := func(name string, age time.Duration, status corev1.PodStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))}, Status: status}
	}
	waiting := func(name, reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	tests := []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"healthy", []corev1.Pod{pod("a", 0, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}}})}, ""},
		{"starting is not a problem", []corev1.Pod{pod("a", 0, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("c", "ContainerCreating", "")}})}, ""},
		{"unschedulable", []corev1.Pod{pod("a", 0, corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: `persistentvolumeclaim "m" not found`}}})},
			`pod a: Unschedulable: persistentvolumeclaim "m" not found`},
		{"image pull", []corev1.Pod{pod("a", 0, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("c", "ImagePullBackOff", "no such image")}})},
			"pod a: container c: ImagePullBackOff: no such image"},
		{"init container exit", []corev1.Pod{pod("a", 0, corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: "storage-initializer",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: "403 Forbidden"}}}}})},
			"pod a: container storage-initializer: Error: 403 Forbidden"},
		{"the newest pod first", []corev1.Pod{
			pod("old", time.Hour, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("c", "ErrImagePull", "old")}}),
			pod("new", 0, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("c", "CrashLoopBackOff", "")}}),
		}, "pod new: container c: CrashLoopBackOff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if p := FirstPodProblem(tt.pods); p != nil {
				got = p.String()
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestPodUpdateIsNews: the pod updates that change what the status says
// are those that trigger a reconcile; scheduling and readiness do not.
func TestPodUpdateIsNews(t *testing.T) {
	pending := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	scheduled := *pending.DeepCopy()
	scheduled.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	unschedulable := *pending.DeepCopy()
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes"}}
	initializing := *scheduled.DeepCopy()
	initializing.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "storage-initializer", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	running := *scheduled.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	ready := *running.DeepCopy()
	ready.Status.Conditions = append(ready.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	unready := *running.DeepCopy()
	unready.Status.Conditions = append(unready.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
	crashing := *running.DeepCopy()
	crashing.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}

	for _, tt := range []struct {
		name         string
		old, updated corev1.Pod
		want         bool
	}{
		{"scheduling changes nothing", pending, scheduled, false},
		{"unschedulable is news", scheduled, unschedulable, true},
		{"scheduled at last is news", unschedulable, scheduled, true},
		{"an init container loading is news", scheduled, initializing, true},
		{"running, not ready yet: loading is news", scheduled, running, true},
		{"running and ready at once: the Deployment says so", scheduled, ready, false},
		{"ready after loading: the Deployment says so", running, ready, false},
		{"ready no more: loading again is news", ready, unready, true},
		{"a crash loop is news", running, crashing, true},
		{"a crash loop ended is news", crashing, running, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PodUpdateIsNews(&tt.old, &tt.updated))
		})
	}
	assert.False(t, podHasNews(&pending), "a new pod tells nothing")
	assert.True(t, podHasNews(&crashing), "a pod with a problem tells it")
}
