package knative

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Observe implements workload.Mode from the Knative Service's status:
// Ready means serving; the rollout is done when the latest created revision
// is ready and ConfigurationsReady and RoutesReady are True.
func (Mode) Observe(ctx context.Context, r client.Reader, c *components.Component) (workload.State, error) {
	ksvc := ServiceKind.New().(*unstructured.Unstructured)
	err := r.Get(ctx, c.Key(), ksvc)
	if apierrors.IsNotFound(err) {
		return workload.State{NotAvailableMessage: "the Knative Service does not exist yet", RolloutMessage: "waiting for the Knative Service"}, nil
	}
	if err != nil {
		return workload.State{}, fmt.Errorf("get Knative Service %s: %w", c.Name, err)
	}
	pods, err := workload.ListPods(ctx, r, c)
	if err != nil {
		return workload.State{}, fmt.Errorf("list pods of %s: %w", c.Name, err)
	}
	return StateOf(ksvc, pods), nil
}

// StateOf reads a component's state from its Knative Service and its pods,
// newest first.
func StateOf(ksvc *unstructured.Unstructured, pods []corev1.Pod) workload.State {
	st := workload.State{Problem: workload.FirstPodProblem(pods), Loading: workload.PodsLoading(pods)}
	status, _, _ := unstructured.NestedMap(ksvc.Object, "status")
	ready, readyMsg := conditionOf(status, "Ready")
	configured, _ := conditionOf(status, "ConfigurationsReady")
	routed, routeMsg := conditionOf(status, "RoutesReady")
	st.Available, st.NotAvailableMessage = ready, readyMsg
	st.URL, _, _ = unstructured.NestedString(status, "url")
	st.LatestReadyRevision, _, _ = unstructured.NestedString(status, "latestReadyRevisionName")
	st.LatestCreatedRevision, _, _ = unstructured.NestedString(status, "latestCreatedRevisionName")
	st.Traffic = trafficOf(status)
	st.RolledOut = ready && configured && routed && st.LatestCreatedRevision != "" && st.LatestCreatedRevision == st.LatestReadyRevision
	switch {
	case st.RolledOut:
	case st.Problem != nil:
		st.RolloutFailed, st.RolloutMessage = true, st.Problem.String()
	case !routed && routeMsg != "":
		st.RolloutMessage = routeMsg
	default:
		st.RolloutMessage = "the latest revision is rolling out"
	}
	return st
}

// conditionOf returns whether a Knative condition is True, and its message.
func conditionOf(status map[string]any, t string) (bool, string) {
	return workload.UnstructuredCondition(status, t, "the Knative Service")
}

func trafficOf(status map[string]any) []v1beta1.TrafficTarget {
	entries, _, _ := unstructured.NestedSlice(status, "traffic")
	var out []v1beta1.TrafficTarget
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		t := v1beta1.TrafficTarget{}
		t.RevisionName, _ = m["revisionName"].(string)
		t.Tag, _ = m["tag"].(string)
		t.URL, _ = m["url"].(string)
		if l, ok := m["latestRevision"].(bool); ok {
			t.LatestRevision = &l
		}
		if p, ok := m["percent"].(int64); ok {
			t.Percent = &p
		}
		out = append(out, t)
	}
	return out
}

// ComponentStatus implements workload.Mode with what Knative reports: the
// component's URL, its revisions and traffic. A revision counts as rolled
// out when it is ready and takes all traffic; the one before it is kept as
// the previous rolled-out revision, which a canary splits traffic with.
func (Mode) ComponentStatus(cs *v1beta1.ComponentStatus, prev v1beta1.ComponentStatus, obs workload.State) {
	if obs.URL != "" {
		cs.URL = obs.URL
	}
	cs.LatestReadyRevision, cs.LatestCreatedRevision, cs.Traffic = obs.LatestReadyRevision, obs.LatestCreatedRevision, obs.Traffic
	cs.LatestRolledoutRevision, cs.PreviousRolledoutRevision = prev.LatestRolledoutRevision, prev.PreviousRolledoutRevision
	if obs.RolledOut && allTrafficToLatest(obs.Traffic) && obs.LatestReadyRevision != prev.LatestRolledoutRevision {
		cs.PreviousRolledoutRevision = prev.LatestRolledoutRevision
		cs.LatestRolledoutRevision = obs.LatestReadyRevision
	}
}

func allTrafficToLatest(traffic []v1beta1.TrafficTarget) bool {
	for _, t := range traffic {
		if t.Percent != nil && *t.Percent > 0 && (t.LatestRevision == nil || !*t.LatestRevision) {
			return false
		}
	}
	return true
}
