package localmodel

import (
	"slices"
	"strings"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// Use is the cache a service's model comes from.
type Use struct {
	// Cache is the cache, and Group the node group whose copy is mounted
	// ("" for a cache on a claim).
	Cache v1alpha1.ModelCache
	Group string
	// URI is where the model server's model is: the cached copy on the
	// group's claim in the service's namespace, with the part of the
	// service's URI below the cache's.
	URI string
}

// Kind is the cache's kind, for messages.
func (u *Use) Kind() string { return v1alpha1.CacheKindOf(u.Cache.GetNamespace()) }

// Choose returns the cache a service with storage URI uri and these
// annotations uses, or nil. As KServe chooses: not when the service has
// the disable-localmodel annotation; a namespace cache of the service's
// namespace before a cluster cache; the first (by name) whose URI matches
// and, when the service names a node group, that lists it; the group named,
// else the cache's first. Caches being deleted are not chosen.
func Choose(uri string, annotations map[string]string, nsCaches []v1alpha1.LocalModelNamespaceCache, caches []v1alpha1.LocalModelCache) *Use {
	if uri == "" {
		return nil
	}
	if _, off := annotations[v1alpha1.DisableLocalModelAnnotation]; off {
		return nil
	}
	group, named := annotations[v1alpha1.NodeGroupAnnotation]
	try := func(c v1alpha1.ModelCache) *Use {
		spec := c.CacheSpec()
		if c.GetDeletionTimestamp() != nil || !v1alpha1.MatchStorageURI(spec.SourceModelUri, uri) {
			return nil
		}
		below := strings.TrimPrefix(strings.TrimSuffix(uri, "/"), strings.TrimSuffix(spec.SourceModelUri, "/"))
		if claim := v1alpha1.ClaimOf(c); claim != "" {
			// One copy on a claim of the namespace, for any node; a
			// service that names a node group is not on it.
			if named {
				return nil
			}
			return &Use{Cache: c, URI: "pvc://" + claim + "/" + modelcache.ModelPath(c.GetNamespace(), spec.SourceModelUri) + below}
		}
		if len(spec.NodeGroups) == 0 {
			return nil
		}
		g := spec.NodeGroups[0]
		if named {
			if !slices.Contains(spec.NodeGroups, group) {
				return nil
			}
			g = group
		}
		return &Use{Cache: c, Group: g, URI: "pvc://" + modelcache.ServingClaimName(c, g) + below}
	}
	for _, c := range sortedByName(nsCaches) {
		if u := try(c); u != nil {
			return u
		}
	}
	for _, c := range sortedByName(caches) {
		if u := try(c); u != nil {
			return u
		}
	}
	return nil
}

// sortedByName returns pointers to the caches in name order, so the choice
// does not depend on the order a list came in.
func sortedByName[T any, P interface {
	*T
	v1alpha1.ModelCache
}](items []T) []v1alpha1.ModelCache {
	out := make([]v1alpha1.ModelCache, 0, len(items))
	for i := range items {
		out = append(out, P(&items[i]))
	}
	slices.SortFunc(out, func(a, b v1alpha1.ModelCache) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}
