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
