package inferenceservice

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// available reports whether the Deployment serves: its Available condition.
func available(dep *appsv1.Deployment) (bool, string) {
	if dep == nil {
		return false, "the Deployment does not exist yet"
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			if c.Status == corev1.ConditionTrue {
				return true, ""
			}
			return false, c.Message
		}
	}
	return false, "the Deployment has no Available condition yet"
}

// rolledOut reports whether the Deployment's latest spec is fully rolled out:
// observed, every replica updated and available, and the rollout complete.
func rolledOut(dep *appsv1.Deployment) (done bool, deadlineExceeded bool) {
	if dep == nil || dep.Status.ObservedGeneration < dep.Generation {
		return false, false
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, true
		}
	}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := dep.Status
	return st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want, false
}

// podProblem is a container that keeps a pod from becoming ready.
type podProblem struct {
	pod, container string
	reason, msg    string
	exitCode       int32
	initContainer  bool
}

func (p podProblem) String() string {
	s := fmt.Sprintf("pod %s: container %s: %s", p.pod, p.container, p.reason)
	if p.msg != "" {
		s += ": " + p.msg
	}
	return s
}

// failingReasons are waiting reasons that will not go away on their own.
var failingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "InvalidImageName": true,
}

// firstPodProblem returns the first failing container of the newest pods,
// init containers first (the storage initializer runs there).
func firstPodProblem(pods []corev1.Pod) *podProblem {
	sorted := append([]corev1.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[j].CreationTimestamp.Before(&sorted[i].CreationTimestamp)
	})
	for _, pod := range sorted {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if p := failingContainer(pod.Name, pod.Status.InitContainerStatuses, true); p != nil {
			return p
		}
		if p := failingContainer(pod.Name, pod.Status.ContainerStatuses, false); p != nil {
			return p
		}
	}
	return nil
}

func failingContainer(pod string, statuses []corev1.ContainerStatus, init bool) *podProblem {
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && failingReasons[w.Reason] {
			p := &podProblem{pod: pod, container: cs.Name, reason: w.Reason, msg: w.Message, initContainer: init}
			if t := cs.LastTerminationState.Terminated; t != nil {
				p.exitCode = t.ExitCode
				if p.msg == "" || w.Reason == "CrashLoopBackOff" {
					p.msg = lastTermination(t)
				}
			}
			return p
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return &podProblem{pod: pod, container: cs.Name, reason: t.Reason, msg: t.Message, exitCode: t.ExitCode, initContainer: init}
		}
	}
	return nil
}

func lastTermination(t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("last exit code %d (%s)", t.ExitCode, t.Reason)
	if t.Message != "" {
		msg += ": " + t.Message
	}
	return msg
}

// podsLoading reports whether any pod is running its init containers or has
// started but is not ready: the model is loading.
func podsLoading(pods []corev1.Pod) bool {
	for _, pod := range pods {
		if pod.Status.Phase == corev1.PodRunning {
			return true
		}
		for _, cs := range pod.Status.InitContainerStatuses {
			if cs.State.Running != nil {
				return true
			}
		}
	}
	return false
}
