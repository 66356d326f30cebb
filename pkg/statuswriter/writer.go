// Package statuswriter is the one way Serval writes the status of the
// objects it reconciles: computed in full by the reconciler, compared
// semantically with what was read, patched once, with the transition time
// of every condition kept until its status changes, and guarded against a
// reconcile that ran on a copy older than the last write.
package statuswriter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Writer writes the status S of one kind's objects.
type Writer[S any] struct {
	// Client writes; its scheme names the kind.
	Client client.Client
	// Status is the status of an object of the kind.
	Status func(client.Object) *S
	// Conditions are a status's conditions; nil for a kind without.
	Conditions func(*S) *[]metav1.Condition
	// AlwaysLock sends every patch with the resourceVersion read: for an
	// object whose status has other writers (a LocalModelNode's agents),
	// where a merge patch from an old copy could keep their stale fields.
	AlwaysLock bool
	// Now is the time (tests); nil: time.Now.
	Now func() time.Time

	// writes remembers, by object, the digest of the status last written
	// and the resourceVersion it was written over.
	writes sync.Map
}

type lastWrite struct{ fromVersion, digest string }

// Write makes obj's status next; orig is the object as read (its status
// is what is compared with). A condition whose status is unchanged keeps
// its LastTransitionTime; a new or changed one without a time gets now.
// Nothing is sent when next equals what was read, nor when a reconcile
// that ran on a copy the cache had not yet updated computes the very
// status this writer last wrote over that copy. A patch computed from such
// a copy, even one equal to what the copy shows, carries its
// resourceVersion, so that it cannot undo a newer write and is not
// skipped as a no-op (the API server refuses it with a conflict, and the
// retry reads the new object). written says whether a patch was sent; on success obj holds
// next.
func (w *Writer[S]) Write(ctx context.Context, obj, orig client.Object, next S) (written bool, err error) {
	w.keepTransitionTimes(&next, w.Status(orig))
	key := client.ObjectKeyFromObject(obj)
	digest := ""
	stale := false
	if v, ok := w.writes.Load(key); ok {
		last := v.(lastWrite)
		if last.fromVersion == orig.GetResourceVersion() {
			// This copy is older than the status the server holds: what it
			// shows is no guide, even when next equals it (a reconcile
			// that computes the status from before the last write must
			// still replace that write).
			if digest = w.digest(next); last.digest == digest {
				return false, nil
			}
			stale = true
		} else {
			w.writes.Delete(key)
		}
	}
	if !stale && equality.Semantic.DeepEqual(next, *w.Status(orig)) {
		return false, nil
	}
	if digest == "" {
		digest = w.digest(next)
	}
	*w.Status(obj) = next
	patch := client.MergeFrom(orig)
	if stale || w.AlwaysLock {
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	data, err := patch.Data(obj)
	if err != nil {
		return false, fmt.Errorf("the status patch of %s: %w", key, err)
	}
	log.FromContext(ctx).V(1).Info("Patching status", "object", key.String(), "patch", string(data))
	target, err := w.metadataOf(obj)
	if err != nil {
		return false, err
	}
	if err := w.Client.Status().Patch(ctx, target, client.RawPatch(patch.Type(), data)); err != nil {
		return false, fmt.Errorf("patch the status of %s: %w", key, err)
	}
	w.writes.Store(key, lastWrite{fromVersion: orig.GetResourceVersion(), digest: digest})
	obj.SetResourceVersion(target.GetResourceVersion())
	return true, nil
}

// Forget drops what the writer remembers of a deleted object.
func (w *Writer[S]) Forget(key types.NamespacedName) { w.writes.Delete(key) }

// keepTransitionTimes gives each condition of next the transition time it
// had in prev while its status is the same.
func (w *Writer[S]) keepTransitionTimes(next, prev *S) {
	if w.Conditions == nil {
		return
	}
	before := *w.Conditions(prev)
	conds := *w.Conditions(next)
	for i := range conds {
		if was := meta.FindStatusCondition(before, conds[i].Type); was != nil && was.Status == conds[i].Status {
			conds[i].LastTransitionTime = was.LastTransitionTime
		} else if conds[i].LastTransitionTime.IsZero() {
			conds[i].LastTransitionTime = metav1.NewTime(w.now())
		}
	}
}

// digest identifies a status by content, transition times apart: a
// reconcile from an old copy computes the same conditions with a later
// time.
func (w *Writer[S]) digest(st S) string {
	data, _ := json.Marshal(st) // a status always encodes
	if w.Conditions != nil {
		var c S
		_ = json.Unmarshal(data, &c)
		for i := range *w.Conditions(&c) {
			(*w.Conditions(&c))[i].LastTransitionTime = metav1.Time{}
		}
		data, _ = json.Marshal(c)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// metadataOf names obj for a write whose response only the metadata is
// wanted of: the API server sends back the metadata alone, and the
// manager decodes no status it has just computed (the watch brings the new
// object to the cache anyway).
func (w *Writer[S]) metadataOf(obj client.Object) (*metav1.PartialObjectMetadata, error) {
	gvk, err := apiutil.GVKForObject(obj, w.Client.Scheme())
	if err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	m.SetGroupVersionKind(gvk)
	return m, nil
}

func (w *Writer[S]) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}
