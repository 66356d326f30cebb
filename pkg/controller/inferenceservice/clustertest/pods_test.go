package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestFailingStorageInitializer: a crash-looping storage initializer shows as
// PredictorReady and LatestDeploymentReady False with the container's reason,
// and as FailedToLoad in modelStatus.
func TestFailingStorageInitializer(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "crash-sklearn", "sklearn-crash")
	createISVC(t, ns, "crash", "sklearn-crash")
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "crash-predictor") })
	setDeploymentStatus(t, ns, "crash-predictor", false, false)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crash-predictor-abc", Namespace: ns, Labels: map[string]string{
			v1beta1.InferenceServiceLabel: "crash", v1beta1.ComponentLabel: "predictor"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "x"}}},
	}
	require.NoError(t, k8s.Create(context.Background(), pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{
		Name: "storage-initializer",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 40s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: "NoCredentialsError: Unable to locate credentials"}},
	}}}
	require.NoError(t, k8s.Status().Update(context.Background(), pod))

	eventually(t, "the failure in the conditions", func() bool {
		i := getISVC(t, ns, "crash")
		return hasCondition(i, v1beta1.ConditionPredictorReady, metav1.ConditionFalse, v1beta1.ReasonNotAvailable) &&
			hasCondition(i, v1beta1.ConditionLatestDeploymentReady, metav1.ConditionFalse, v1beta1.ReasonRolloutFailed)
	})
	i := getISVC(t, ns, "crash")
	want := "pod crash-predictor-abc: container storage-initializer: CrashLoopBackOff: last exit code 1 (Error): NoCredentialsError: Unable to locate credentials"
	assert.Equal(t, want, cond(i, v1beta1.ConditionPredictorReady).Message)
	assert.Equal(t, "crash-predictor: "+want, cond(i, v1beta1.ConditionLatestDeploymentReady).Message)
	assert.Equal(t, v1beta1.ModelFailedToLoad, i.Status.ModelStatus.States.ActiveModelState)
	assert.Equal(t, v1beta1.TransitionBlockedByFailedLoad, i.Status.ModelStatus.TransitionStatus)
	require.NotNil(t, i.Status.ModelStatus.LastFailureInfo)
	assert.Equal(t, v1beta1.ModelLoadFailed, i.Status.ModelStatus.LastFailureInfo.Reason)
	assert.Equal(t, int32(1), i.Status.ModelStatus.LastFailureInfo.ExitCode)
	assert.Equal(t, "crash-predictor-abc", i.Status.ModelStatus.LastFailureInfo.Location)
}

// TestOldPodsServeWhileTheNewOneFails: Ready stays True on the old pods while
// LatestDeploymentReady reports the failing rollout.
func TestOldPodsServeWhileTheNewOneFails(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "rollout-sklearn", "sklearn-rollout")
	createISVC(t, ns, "rollout", "sklearn-rollout")
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "rollout-predictor") })
	setDeploymentStatus(t, ns, "rollout-predictor", true, false)
	createPodPullingNothing(t, ns, "rollout-predictor-new", "rollout")
	eventually(t, "Ready with a failing rollout", func() bool {
		i := getISVC(t, ns, "rollout")
		return hasCondition(i, v1beta1.ConditionReady, metav1.ConditionTrue, "") &&
			hasCondition(i, v1beta1.ConditionLatestDeploymentReady, metav1.ConditionFalse, v1beta1.ReasonRolloutFailed)
	})
	assert.Contains(t, cond(getISVC(t, ns, "rollout"), v1beta1.ConditionLatestDeploymentReady).Message, "ImagePullBackOff")
}

// createPodPullingNothing creates a predictor pod of the InferenceService
// whose image does not pull (ImagePullBackOff).
func createPodPullingNothing(t *testing.T, ns, name, isvc string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			v1beta1.InferenceServiceLabel: isvc, v1beta1.ComponentLabel: "predictor"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "x"}}},
	}
	require.NoError(t, k8s.Create(context.Background(), pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "kserve-container", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: `Back-off pulling image "x"`}},
	}}}
	require.NoError(t, k8s.Status().Update(context.Background(), pod))
}
