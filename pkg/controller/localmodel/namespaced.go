package localmodel

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// volumesProducer renders a cache's volumes and claims. A namespace
// cache's volumes are cluster-scoped and controlled by their node groups,
// so the run's prune finds them by the cache's labels under every group
// (a group taken off the cache's list among them).
func (r *Reconciler) volumesProducer(ctx context.Context, c v1alpha1.ModelCache, vs []cacheobjects.Volume) (*volumesProducer, error) {
	ref := cacheobjects.CacheRef(c)
	p := &volumesProducer{}
	for _, v := range vs {
		objs, err := v.Objects()
		if err != nil {
			return nil, err
		}
		// The volume first, then its claim.
		for i, o := range objs {
			controller := v.VolumeOwner
			if i == 1 {
				controller = v.ClaimOwner
			}
			if controller.UID != ref.UID {
				o.Controller = controller.UID
			}
			p.objs = append(p.objs, o)
		}
	}
	if !r.Namespaced {
		return p, nil
	}
	groups := &v1alpha1.LocalModelNodeGroupList{}
	if err := r.Client.List(ctx, groups); err != nil {
		return nil, err
	}
	labels := map[string]string{modelcache.NamespaceCacheLabel: c.GetName(), modelcache.NamespaceCacheNamespaceLabel: c.GetNamespace()}
	for _, g := range groups.Items {
		p.scopes = append(p.scopes, apply.PruneScope{Labels: labels, Owner: g.UID,
			Kinds: []schema.GroupVersionKind{cacheobjects.PersistentVolumeKind.GVK}})
	}
	return p, nil
}

// volumesProducer is a cache's volumes and claims; it reads nothing back
// (the agents report the copies).
type volumesProducer struct {
	objs   []apply.Object
	scopes []apply.PruneScope
}

func (p *volumesProducer) Component() v1beta1.ComponentType { return "" }
func (p *volumesProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	return p.objs, nil, nil
}
func (p *volumesProducer) Absent(*kinds.Kind) *pipeline.Failure         { return nil }
func (p *volumesProducer) Observe(context.Context, client.Reader) error { return nil }
func (p *volumesProducer) PruneScopes() []apply.PruneScope              { return p.scopes }

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
		// Its volumes belong to their groups: a run that renders none
		// deletes them.
		vp, err := r.volumesProducer(ctx, c, nil)
		if err != nil {
			return err
		}
		if _, err := r.pipeline.Run(ctx, pipeline.Request{Owner: pipeline.Owner{Object: c, Ref: *cacheobjects.CacheRef(c)},
			Producers: []pipeline.Producer{vp}}); err != nil {
			return err
		}
	}
	patch := client.MergeFrom(c.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(c, modelcache.Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, c, patch))
}
