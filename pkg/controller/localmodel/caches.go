package localmodel

import (
	"context"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Caches are the cluster's caches, read once for many choices.
type Caches struct {
	Cluster    []v1alpha1.LocalModelCache
	Namespaced map[string][]v1alpha1.LocalModelNamespaceCache
}

// ListCaches reads every cache.
func ListCaches(ctx context.Context, r client.Reader) (*Caches, error) {
	cl := &v1alpha1.LocalModelCacheList{}
	if err := r.List(ctx, cl); err != nil {
		return nil, err
	}
	ns := &v1alpha1.LocalModelNamespaceCacheList{}
	if err := r.List(ctx, ns); err != nil {
		return nil, err
	}
	out := &Caches{Cluster: cl.Items, Namespaced: map[string][]v1alpha1.LocalModelNamespaceCache{}}
	for _, c := range ns.Items {
		out.Namespaced[c.Namespace] = append(out.Namespaced[c.Namespace], c)
	}
	return out, nil
}

// ListCachesFor reads the caches a service of namespace may use.
func ListCachesFor(ctx context.Context, r client.Reader, namespace string) (*Caches, error) {
	cl := &v1alpha1.LocalModelCacheList{}
	if err := r.List(ctx, cl); err != nil {
		return nil, err
	}
	ns := &v1alpha1.LocalModelNamespaceCacheList{}
	if err := r.List(ctx, ns, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	return &Caches{Cluster: cl.Items, Namespaced: map[string][]v1alpha1.LocalModelNamespaceCache{namespace: ns.Items}}, nil
}

// Choose is Choose for a service of namespace.
func (c *Caches) Choose(uri, namespace string, annotations map[string]string) *Use {
	if len(c.Cluster) == 0 && len(c.Namespaced[namespace]) == 0 {
		return nil
	}
	return Choose(uri, annotations, c.Namespaced[namespace], c.Cluster)
}

// All returns every cache.
func (c *Caches) All() []v1alpha1.ModelCache {
	var out []v1alpha1.ModelCache
	for i := range c.Cluster {
		out = append(out, &c.Cluster[i])
	}
	for _, ns := range slices.Sorted(maps.Keys(c.Namespaced)) {
		for i := range c.Namespaced[ns] {
			out = append(out, &c.Namespaced[ns][i])
		}
	}
	return out
}

// CacheChanged passes the changes of a cache that change what its services
// do: its creation and deletion, its spec, its readiness.
var CacheChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(v1alpha1.ModelCache), e.ObjectNew.(v1alpha1.ModelCache)
	if o.GetGeneration() != n.GetGeneration() || (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) {
		return true
	}
	ok1, r1, m1 := CacheReady(o)
	ok2, r2, m2 := CacheReady(n)
	return ok1 != ok2 || r1 != r2 || m1 != m2
}}

// Concerns reports whether a cache may be the one a service of namespace
// with storage URI uri uses.
func Concerns(c v1alpha1.ModelCache, namespace, uri string) bool {
	if ns := c.GetNamespace(); ns != "" && ns != namespace {
		return false
	}
	return uri != "" && v1alpha1.MatchStorageURI(c.CacheSpec().SourceModelUri, uri)
}
