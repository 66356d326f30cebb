package workload

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// PodProblem is a container that keeps a pod from becoming ready.
type PodProblem struct {
	Pod, Container string
	Reason, Msg    string
	ExitCode       int32
	InitContainer  bool
}

// Unschedulable reports a pod the scheduler cannot place: a capacity or
// placement problem, not a model that fails to load.
func (p PodProblem) Unschedulable() bool {
	return p.Container == "" && p.Reason == corev1.PodReasonUnschedulable
}

// String is the problem as a status message shows it: the pod, the
// container and the reason.
func (p PodProblem) String() string {
	s := fmt.Sprintf("pod %s: container %s: %s", p.Pod, p.Container, p.Reason)
	if p.Container == "" {
		s = fmt.Sprintf("pod %s: %s", p.Pod, p.Reason)
	}
	if p.Msg != "" {
		s += ": " + p.Msg
	}
	return s
}

// failingReasons are waiting reasons that will not go away on their own.
var failingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "InvalidImageName": true,
}

// FirstPodProblem returns the first failing container of the newest pods,
// init containers first (the storage initializer runs there).
func FirstPodProblem(pods []corev1.Pod) *PodProblem {
	sorted := append([]corev1.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[j].CreationTimestamp.Before(&sorted[i].CreationTimestamp)
	})
	for _, pod := range sorted {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if p := unschedulable(pod); p != nil {
			return p
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

// unschedulable reports a pod the scheduler cannot place, with its reason
// (no node fits, a missing PersistentVolumeClaim, ...).
func unschedulable(pod corev1.Pod) *PodProblem {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &PodProblem{Pod: pod.Name, Reason: c.Reason, Msg: c.Message}
		}
	}
	return nil
}

func failingContainer(pod string, statuses []corev1.ContainerStatus, init bool) *PodProblem {
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && failingReasons[w.Reason] {
			p := &PodProblem{Pod: pod, Container: cs.Name, Reason: w.Reason, Msg: w.Message, InitContainer: init}
			if t := cs.LastTerminationState.Terminated; t != nil {
				p.ExitCode = t.ExitCode
				if p.Msg == "" || w.Reason == "CrashLoopBackOff" {
					p.Msg = lastTermination(t)
				}
			}
			return p
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return &PodProblem{Pod: pod, Container: cs.Name, Reason: t.Reason, Msg: t.Message, ExitCode: t.ExitCode, InitContainer: init}
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

// PodsLoading reports whether any pod is running its init containers or has
// started but is not ready: the model is loading.
func PodsLoading(pods []corev1.Pod) bool {
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

// podNews is what a pod tells the status: its problem, if any, and whether
// it is visibly loading the model.
type podNews struct {
	problem string
	loading bool
}

// newsOf reads a pod's news. A pod is visibly loading while an init
// container runs or while it runs but is not ready yet; once ready, the
// Deployment (or the Knative revision) reports it.
func newsOf(pod *corev1.Pod) podNews {
	var n podNews
	if p := FirstPodProblem([]corev1.Pod{*pod}); p != nil {
		n.problem = p.String()
	}
	n.loading = PodsLoading([]corev1.Pod{*pod}) && !podReady(pod)
	return n
}

func (n podNews) any() bool { return n.problem != "" || n.loading }

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodUpdateIsNews reports whether a pod's update changes what a status
// says: a problem that appears, changes or goes, or a pod that starts
// loading its model. Scheduling, an IP and readiness are not news: the
// Deployment reports readiness anyway, and a pod that turns Running and
// Ready in one update (no readiness probe, or a quick one) loaded nothing
// the status should show for the moment before its Deployment says so.
func PodUpdateIsNews(old, updated *corev1.Pod) bool {
	o, n := newsOf(old), newsOf(updated)
	return o.problem != n.problem || (n.loading && !o.loading)
}

// PodSignalChanged passes the pod events that change what a status says: a
// new or deleted pod with something to tell, an update that is news.
var PodSignalChanged = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return podHasNews(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*corev1.Pod)
		updated, ok2 := e.ObjectNew.(*corev1.Pod)
		return ok1 && ok2 && PodUpdateIsNews(old, updated)
	},
	DeleteFunc:  func(e event.DeleteEvent) bool { return podHasNews(e.Object) },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func podHasNews(obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	return ok && newsOf(pod).any()
}
