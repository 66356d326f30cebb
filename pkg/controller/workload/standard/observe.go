package standard

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Observe implements workload.Mode: Available means serving; the rollout
// is done when every replica runs the latest spec.
func (Mode) Observe(ctx context.Context, r client.Reader, c *components.Component) (workload.State, error) {
	var dep *appsv1.Deployment
	d := &appsv1.Deployment{}
	err := r.Get(ctx, c.Key(), d)
	switch {
	case err == nil:
		dep = d
	case !apierrors.IsNotFound(err):
		return workload.State{}, fmt.Errorf("get Deployment %s: %w", c.Name, err)
	}
	pods, err := workload.ListPods(ctx, r, c)
	if err != nil {
		return workload.State{}, fmt.Errorf("list pods of %s: %w", c.Name, err)
	}
	st := StateOf(dep, pods)
	if dep != nil {
		st.AppliedHash = dep.Annotations[apply.HashAnnotation]
	}
	if err := observeWorker(ctx, r, c, &st); err != nil {
		return workload.State{}, err
	}
	if c.ScalesFromZero() {
		heldAtZero(&st, dep)
	}
	if WantsScaledObject(c) && st.Available {
		// Serving, but not as asked until KEDA scales it.
		ready, msg, err := observeScaledObject(ctx, r, c)
		if err != nil {
			return workload.State{}, err
		}
		if !ready {
			st.Available, st.NotAvailableMessage = false, "KEDA does not scale the Deployment yet: "+msg
		}
	}
	return st, nil
}

// heldAtZero is the state of a component that scales from zero while it
// has no available replica and none fails: the activator holds its
// requests until one is ready, so it serves; ScaledToZero while no
// replica is asked for.
func heldAtZero(st *workload.State, dep *appsv1.Deployment) {
	if dep == nil || dep.Status.AvailableReplicas > 0 || st.Problem != nil {
		return
	}
	st.Available, st.NotAvailableMessage = true, ""
	st.ScaledToZero = dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0
}

// StateOf reads a component's state from its Deployment (nil when it does
// not exist yet) and its pods, newest first.
func StateOf(dep *appsv1.Deployment, pods []corev1.Pod) workload.State {
	st := workload.State{Problem: workload.FirstPodProblem(pods), Loading: workload.PodsLoading(pods)}
	st.Available, st.NotAvailableMessage = available(dep)
	var deadline bool
	st.RolledOut, deadline = rolledOut(dep)
	failure := replicaFailure(dep)
	if !st.Available && failure != "" {
		st.NotAvailableMessage = failure
	}
	switch {
	case st.RolledOut:
	case st.Problem != nil:
		st.RolloutFailed, st.RolloutMessage = true, st.Problem.String()
	case failure != "":
		st.RolloutFailed, st.RolloutMessage = true, failure
	case deadline:
		st.RolloutFailed, st.RolloutMessage = true, "the rollout exceeded its progress deadline"
	default:
		st.RolloutMessage = "the latest spec is rolling out"
	}
	return st
}

// NoReplicaYet is the message of a Deployment that has no available
// replica yet. It is the same whether the Deployment was just created or its
// controller has not counted a replica yet, so the status is written once
// while a component starts, not at each step of the Deployment's.
const NoReplicaYet = "waiting for a replica of the Deployment to become available"

// available reports whether the Deployment serves: at least one replica is
// available. A scale-up or a rollout whose new pods are not ready yet makes
// the Deployment's own Available condition False (it counts minimum
// availability), but the old pods still serve: that is not an outage.
func available(dep *appsv1.Deployment) (bool, string) {
	if dep == nil {
		return false, NoReplicaYet
	}
	if dep.Status.AvailableReplicas > 0 {
		return true, ""
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			if dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0 {
				return false, "the Deployment is scaled to zero"
			}
			return true, ""
		}
	}
	return false, NoReplicaYet
}

// replicaFailure says why the Deployment's controller cannot create its
// pods (its ReplicaFailure condition: a quota, a missing ServiceAccount, an
// admission webhook that refuses them), with the Deployment's message; ""
// when it can.
func replicaFailure(dep *appsv1.Deployment) string {
	if dep == nil {
		return ""
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("the Deployment cannot create its pods (%s): %s", c.Reason, c.Message)
		}
	}
	return ""
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

// DeploymentSignal is what Observe reads of a Deployment's status: whether
// it serves (and why not), and whether the rollout is done or stuck.
func DeploymentSignal(obj client.Object) string {
	dep, ok := obj.(*appsv1.Deployment)
	if !ok {
		return ""
	}
	avail, msg := available(dep)
	done, deadline := rolledOut(dep)
	return fmt.Sprintf("%t/%s/%t/%t/%s", avail, msg, done, deadline, replicaFailure(dep))
}
