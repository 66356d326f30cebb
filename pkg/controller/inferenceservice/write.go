package inferenceservice

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// writeStatus computes the status and patches it, once, only if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	st := computeStatus(s)
	r.Metrics.observe(s.isvc, st.Conditions)
	if equality.Semantic.DeepEqual(st, s.orig.Status) {
		return nil
	}
	s.isvc.Status = st
	patch := client.MergeFrom(s.orig)
	if data, err := patch.Data(s.isvc); err == nil {
		log.FromContext(ctx).V(1).Info("Patching status", "patch", string(data))
	}
	if err := r.Client.Status().Patch(ctx, s.isvc, patch); err != nil {
		return fmt.Errorf("patch status of %s: %w", s.isvc.Name, err)
	}
	r.recordTransitions(s.isvc, &s.orig.Status, &st)
	return nil
}

// recordTransitions emits Events when Ready flips and when the runtime changes.
func (r *Reconciler) recordTransitions(isvc *v1beta1.InferenceService, before, after *v1beta1.InferenceServiceStatus) {
	was := meta.FindStatusCondition(before.Conditions, v1beta1.ConditionReady)
	now := meta.FindStatusCondition(after.Conditions, v1beta1.ConditionReady)
	if now != nil && (was == nil || was.Status != now.Status || was.Reason != now.Reason) {
		if now.Status == metav1.ConditionTrue {
			r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "InferenceService is Ready at %s", after.URL)
		} else {
			r.Recorder.Eventf(isvc, nil, corev1.EventTypeWarning, "NotReady", "Reconcile", "%s: %s", now.Reason, now.Message)
		}
	}
	oldRT := before.ServingRuntimeName + before.ClusterServingRuntimeName
	newRT := after.ServingRuntimeName + after.ClusterServingRuntimeName
	if newRT != "" && (oldRT != newRT || before.ProtocolVersion != after.ProtocolVersion) {
		kind := "ClusterServingRuntime"
		if after.ServingRuntimeName != "" {
			kind = "ServingRuntime"
		}
		r.Recorder.Eventf(isvc, nil, corev1.EventTypeNormal, "RuntimeSelected", "SelectRuntime",
			"%s %s serves the model with protocol %s", kind, newRT, after.ProtocolVersion)
	}
}
