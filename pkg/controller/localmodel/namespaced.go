package localmodel

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// applyGroupVolumes applies a namespace cache's volumes, each under the
// group that owns it, and deletes its volumes no longer desired (a group
// taken off its list).
func (r *Reconciler) applyGroupVolumes(ctx context.Context, c v1alpha1.ModelCache, byGroup map[types.UID][]apply.Object) (*apply.Failure, error) {
	keep := map[string]bool{}
	var failure *apply.Failure
	for uid, objs := range byGroup {
		for _, o := range objs {
			keep[o.Key.Name] = true
		}
		for _, f := range r.Applier.Apply(ctx, uid, objs).Failures {
			if !f.Stale() && failure == nil {
				failure = &f
			}
		}
	}
	return failure, r.deleteVolumes(ctx, c, keep)
}

// deleteVolumes deletes a namespace cache's volumes but those in keep.
func (r *Reconciler) deleteVolumes(ctx context.Context, c v1alpha1.ModelCache, keep map[string]bool) error {
	pvs := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, pvs, client.MatchingLabels{modelcache.NamespaceCacheLabel: c.GetName(),
		modelcache.NamespaceCacheNamespaceLabel: c.GetNamespace()}); err != nil {
		return err
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if keep[pv.Name] || pv.DeletionTimestamp != nil {
			continue
		}
		uid := pv.UID
		if err := r.Client.Delete(ctx, pv, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the volume %s: %w", pv.Name, err)
		}
	}
	return nil
}

// finalize takes a cache being deleted off its nodes' lists (their agents
// then delete the copies no other cache keeps), deletes a namespace
// cache's volumes, and lets the cache go.
func (r *Reconciler) finalize(ctx context.Context, c v1alpha1.ModelCache) error {
	if !controllerutil.ContainsFinalizer(c, modelcache.Finalizer) {
		return nil
	}
	lmns := &v1alpha1.LocalModelNodeList{}
	if err := r.Client.List(ctx, lmns); err != nil {
		return err
	}
	key := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
	for i := range lmns.Items {
		if err := r.setEntry(ctx, &lmns.Items[i], key, nil); err != nil {
			return err
		}
	}
	if r.Namespaced {
		if err := r.deleteVolumes(ctx, c, nil); err != nil {
			return err
		}
	}
	patch := client.MergeFrom(c.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(c, modelcache.Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, c, patch))
}
