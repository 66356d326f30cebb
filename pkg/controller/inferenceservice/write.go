package inferenceservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// writeStatus computes the status and writes it (see statuswriter), with
// the Events its transitions call for.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	st := computeStatus(s)
	written, err := r.status.Write(ctx, s.isvc, s.orig, st)
	if err != nil || !written {
		return err
	}
	r.recordTransitions(s.isvc, &s.orig.Status, &st, failing(s, &st))
	return nil
}

// newStatusWriter is the writer of InferenceService statuses.
func newStatusWriter(c client.Client) *statuswriter.Writer[v1beta1.InferenceServiceStatus] {
	return &statuswriter.Writer[v1beta1.InferenceServiceStatus]{Client: c,
		Status:     func(o client.Object) *v1beta1.InferenceServiceStatus { return &o.(*v1beta1.InferenceService).Status },
		Conditions: func(st *v1beta1.InferenceServiceStatus) *[]metav1.Condition { return &st.Conditions }}
}

// recordTransitions emits an Event for what is news, and only for that: the
// InferenceService turning Ready; turning unready after it was Ready, or
// failing (rather than merely rolling out) with a new reason or message; a
// change of the runtime that serves it. Its first steps to Ready (the
// runtime first chosen, not ready yet while the pods start) are in the
// status and need no Event.
func (r *Reconciler) recordTransitions(isvc *v1beta1.InferenceService, before, after *v1beta1.InferenceServiceStatus, failing bool) {
	pipeline.RecordReadiness(r.Recorder, isvc, "InferenceService", after.URL, before.Conditions, after.Conditions, failing)
	oldRT := before.ServingRuntimeName + before.ClusterServingRuntimeName
	newRT := after.ServingRuntimeName + after.ClusterServingRuntimeName
	if oldRT != "" && newRT != "" && (oldRT != newRT || before.ProtocolVersion != after.ProtocolVersion) {
		kind := "ClusterServingRuntime"
		if after.ServingRuntimeName != "" {
			kind = "ServingRuntime"
		}
		r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, v1beta1.EventRuntimeSelected, "SelectRuntime",
			"%s %s serves the model with protocol %s", kind, newRT, after.ProtocolVersion)
	}
}

// progressReasons are the reasons of a route that is on its way, not failing.
var progressReasons = map[string]bool{
	v1beta1.ReasonIngressNotCreated: true, v1beta1.ReasonNoLoadBalancerAddress: true,
	v1beta1.ReasonRouteNotReady: true, v1beta1.ReasonWaitingForKnativeRoute: true,
}

// failing reports whether the InferenceService is unready because something
// failed (a mistake in the spec, an object the API server refused, a pod
// that crashes, a missing CRD), not because it is still rolling out.
func failing(s *scope, st *v1beta1.InferenceServiceStatus) bool {
	if s.isvc.DecodeError != "" || s.failure != nil || len(s.out.ApplyFailures) > 0 {
		return true
	}
	for _, obs := range s.out.Observed {
		if obs.Problem != nil || obs.RolloutFailed {
			return true
		}
	}
	c := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionIngressReady)
	return c != nil && c.Status != metav1.ConditionTrue && !progressReasons[c.Reason]
}
