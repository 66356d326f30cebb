package inferenceservice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
)

// writeStatus computes the status and patches it, once, only if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	st := computeStatus(s)
	if equality.Semantic.DeepEqual(st, s.orig.Status) {
		return nil
	}
	key := client.ObjectKeyFromObject(s.isvc)
	digest := statusDigest(&st)
	stale, written := r.statusWrites.check(key, s.isvc.ResourceVersion, digest)
	if written {
		return nil
	}
	fromVersion := s.isvc.ResourceVersion
	s.isvc.Status = st
	patch := client.MergeFrom(s.orig)
	if stale {
		// A patch computed from an old copy could undo part of the last
		// write: send it only if the object is still at that version (else
		// the API server refuses it, and the retry reads the new one).
		patch = client.MergeFromWithOptions(s.orig, client.MergeFromWithOptimisticLock{})
	}
	data, err := patch.Data(s.isvc)
	if err != nil {
		return fmt.Errorf("patch status of %s: %w", s.isvc.Name, err)
	}
	log.FromContext(ctx).V(1).Info("Patching status", "patch", string(data))
	if err := r.Client.Status().Patch(ctx, metadataOf(s.isvc), client.RawPatch(patch.Type(), data)); err != nil {
		return fmt.Errorf("patch status of %s: %w", s.isvc.Name, err)
	}
	r.statusWrites.record(key, fromVersion, digest)
	r.recordTransitions(s.isvc, &s.orig.Status, &st, failing(s, &st))
	return nil
}

// metadataOf names isvc for a write whose response only the metadata is
// wanted of: the API server sends back the object's metadata alone, and the
// manager decodes no status it has just computed (the watch brings the new
// object to the cache anyway).
func metadataOf(isvc *v1beta1.InferenceService) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: isvc.Namespace, Name: isvc.Name}}
	m.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("InferenceService"))
	return m
}

// statusWrites remembers, for each InferenceService, a digest of the status
// last written and the resourceVersion it was written over. A reconcile
// that runs before the cache has seen that write (a child's event arrives
// first; the InferenceService's own status updates trigger nothing) reads
// the old object; if it computes the status already written, it writes
// nothing, instead of patching the same status again.
type statusWrites struct{ m sync.Map }

type statusWrite struct{ fromVersion, digest string }

// check reports whether the cache still shows the version the last status
// was written over (stale), and whether that status had this digest
// (written). It forgets the entry once the cache shows a later version.
func (w *statusWrites) check(key types.NamespacedName, cachedVersion, digest string) (stale, written bool) {
	v, ok := w.m.Load(key)
	if !ok {
		return false, false
	}
	last := v.(statusWrite)
	if last.fromVersion != cachedVersion {
		w.m.Delete(key)
		return false, false
	}
	return true, last.digest == digest
}

func (w *statusWrites) record(key types.NamespacedName, fromVersion, digest string) {
	w.m.Store(key, statusWrite{fromVersion: fromVersion, digest: digest})
}

func (w *statusWrites) forget(key types.NamespacedName) { w.m.Delete(key) }

// statusDigest identifies a status by content, transition times apart: a
// reconcile from an old copy computes the same conditions with a later time.
func statusDigest(st *v1beta1.InferenceServiceStatus) string {
	c := st.DeepCopy()
	for i := range c.Conditions {
		c.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	data, _ := json.Marshal(c) // a status always encodes
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
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
