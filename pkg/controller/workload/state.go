package workload

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// State is what the status needs to know of a component's running workload,
// whatever the mode.
type State struct {
	// Available: the component serves requests.
	Available bool
	// NotAvailableMessage says why not.
	NotAvailableMessage string
	// RolledOut: the latest spec serves all traffic.
	RolledOut bool
	// RolloutFailed: the rollout cannot finish on its own (a failing pod, a
	// deadline passed); RolloutMessage says why.
	RolloutFailed  bool
	RolloutMessage string
	// Problem is the first failing container among the component's pods.
	Problem *PodProblem
	// Loading: some pod is initialising or starting.
	Loading bool
	// ScaledToZero: the component scales from zero and runs no replica;
	// it is Available, its requests held by the activator (the condition
	// that says so reads ScaledToZeroMessage).
	ScaledToZero bool
	// AppliedHash is the workload object's apply.HashAnnotation as read:
	// the desired state it was last written with (Standard mode).
	AppliedHash string
	// URL is the workload's own URL (Knative), or "".
	URL string
	// Revisions are Knative's revision names and traffic; empty in Standard mode.
	LatestReadyRevision, LatestCreatedRevision string
	Traffic                                    []v1beta1.TrafficTarget
}

// ScaledToZeroMessage is the message of the condition that says a
// component that scales from zero runs no replica.
const ScaledToZeroMessage = "no replica runs, as no request came for KEDA's cooldown; the activator holds the next request until a replica is ready"

// ListPods returns the component's pods, newest first. r must be the
// manager's cache, which has OwnerIndex.
func ListPods(ctx context.Context, r client.Reader, c *components.Component) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(c.Namespace()), client.MatchingLabels(c.Selector),
		client.MatchingFields{owner.Index: c.OwnerKey()}); err != nil {
		return nil, err
	}
	sort.SliceStable(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	return pods.Items, nil
}

// UnstructuredCondition reads condition t of an Unstructured object's
// status (a Knative Service, a KEDA ScaledObject): whether it is True, and
// its reason and message; what names the object in the message of a
// condition not reported yet.
func UnstructuredCondition(status map[string]any, t, what string) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		msg, _ := m["message"].(string)
		if reason, _ := m["reason"].(string); reason != "" && msg != "" {
			msg = reason + ": " + msg
		}
		return m["status"] == string(corev1.ConditionTrue), msg
	}
	return false, what + " has not reported " + t
}

// UnstructuredStrings is a string map as an Unstructured object holds it
// (labels, annotations of a kind Serval builds as Unstructured).
func UnstructuredStrings(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
