package inferencegraph

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
)

// The reasons of the graph's conditions, besides those InferenceServices
// share (v1beta1.Reason*).
const (
	// ReasonWaitingForServices: an InferenceService the graph names has no
	// address yet, so the router cannot be given the graph.
	ReasonWaitingForServices = "WaitingForInferenceServices"
	// ReasonServicesNotReady: an InferenceService the graph names is
	// missing or not Ready.
	ReasonServicesNotReady = "InferenceServicesNotReady"
	// ReasonServicesReady: every InferenceService the graph names is Ready.
	ReasonServicesReady = "InferenceServicesReady"
	// ReasonReady: the graph serves.
	ReasonReady = "Ready"
)

// computeStatus is the status the scope's observations call for.
func computeStatus(s *scope) v1alpha1.InferenceGraphStatus {
	st := s.orig.Status.DeepCopy()
	if len(s.out.ApplyFailures) == 0 {
		// A generation whose objects the API server refused is not in
		// force: observedGeneration stays at the last one that is.
		st.ObservedGeneration = s.ig.Generation
	}
	st.DeploymentMode = s.mode
	set := func(t string, ok bool, reason, message string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: s.ig.Generation})
	}
	router, ingressCond := routerCondition(s), ingressCondition(s)
	set(v1alpha1.GraphRouterReady, router.ok, router.reason, router.message)
	if len(s.notReady) == 0 {
		set(v1alpha1.GraphServicesReady, true, ReasonServicesReady, "every InferenceService the graph names is Ready")
	} else {
		set(v1alpha1.GraphServicesReady, false, ReasonServicesNotReady, "not Ready: "+strings.Join(s.notReady, ", "))
	}
	set(v1alpha1.GraphIngressReady, ingressCond.ok, ingressCond.reason, ingressCond.message)
	ready := condition{ok: true, reason: ReasonReady, message: "the router serves and every InferenceService the graph names is Ready"}
	for _, t := range []string{v1alpha1.GraphRouterReady, v1alpha1.GraphServicesReady, v1alpha1.GraphIngressReady} {
		if c := meta.FindStatusCondition(st.Conditions, t); c.Status != metav1.ConditionTrue {
			ready = condition{reason: c.Reason, message: c.Message}
			break
		}
	}
	set(v1beta1.ConditionReady, ready.ok, ready.reason, ready.message)
	if s.plan != nil {
		st.URL, st.Address = s.plan.Top.URL, &v1beta1.Addressable{URL: s.plan.Top.ClusterURL}
		if s.out.Routes.URL != "" {
			st.URL = s.out.Routes.URL
		}
		if s.out.Routes.ClusterURL != "" {
			st.Address = &v1beta1.Addressable{URL: s.out.Routes.ClusterURL}
		}
	}
	return *st
}

type condition struct {
	ok              bool
	reason, message string
}

func routerCondition(s *scope) condition {
	state := s.out.Observed[RouterComponent]
	f, applyFailed := s.out.ApplyFailures[RouterComponent]
	switch {
	case s.failure != nil && s.failure.Component == RouterComponent:
		return condition{reason: s.failure.Reason, message: s.failure.Message}
	case applyFailed:
		return condition{reason: f.Reason(), message: f.Message()}
	case s.waiting && !state.Available:
		return condition{reason: ReasonWaitingForServices, message: "the router starts once every InferenceService the graph names has an address; not yet: " +
			strings.Join(s.notReady, ", ")}
	case state.Available && state.RolloutFailed:
		return condition{ok: true, reason: v1beta1.ReasonAvailable, message: "the router serves, but its latest spec does not roll out: " + state.RolloutMessage}
	case state.Available:
		return condition{ok: true, reason: v1beta1.ReasonAvailable, message: "the router serves"}
	case state.Problem != nil:
		return condition{reason: v1beta1.ReasonNotAvailable, message: state.Problem.String()}
	}
	return condition{reason: v1beta1.ReasonNotAvailable, message: state.NotAvailableMessage}
}

func ingressCondition(s *scope) condition {
	f, applyFailed := s.out.ApplyFailures[""]
	switch {
	case s.failure != nil && s.failure.Component == "":
		return condition{reason: s.failure.Reason, message: s.failure.Message}
	case applyFailed:
		return condition{reason: f.Reason(), message: f.Message()}
	case s.out.MissingRouteKind != nil:
		k := s.out.MissingRouteKind
		return condition{reason: v1beta1.ReasonMissingCRD,
			message: k.MissingMessage("the route needs a " + k.GVK.Kind)}
	case s.out.Router == nil:
		return condition{reason: v1beta1.ReasonIngressNotConfigured, message: "the route is planned once the router is"}
	case s.out.Routes.Reason == "":
		// The reconcile stopped before the route was read.
		return condition{reason: v1beta1.ReasonIngressNotConfigured, message: "the route has not been read yet"}
	}
	return condition{ok: s.out.Routes.Ready, reason: s.out.Routes.Reason, message: s.out.Routes.Message}
}

// writeStatus writes the status (see statuswriter), and records an Event
// when the graph turns Ready or stops being Ready.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	st := computeStatus(s)
	written, err := r.status.Write(ctx, s.ig, s.orig, st)
	if err != nil || !written {
		return err
	}
	pipeline.RecordReadiness(r.Recorder, s.ig, "InferenceGraph", st.URL, s.orig.Status.Conditions, st.Conditions, false)
	return nil
}
