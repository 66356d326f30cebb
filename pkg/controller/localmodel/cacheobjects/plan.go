package cacheobjects

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// Volumes are the volumes and claims of a cache on its groups.
//
// A service namespace gets one claim per group, bound to a volume of the
// cache's model folder alone: the claim cannot reach any other folder of
// the group's disk, and the chart's admission policy refuses a pod that
// mounts it writable (modelcache.ServingClaimName).
//
// A LocalModelCache's downloads write through one claim per group in the
// download Jobs' namespace (Serval's own), bound to the group's whole disk
// ({cache}-{group}-download, KServe's names). A LocalModelNamespaceCache's
// downloads write through a claim of its own folder in its own namespace.
// A cluster cache owns all its volumes and claims. A namespace cache owns
// its claims, and its groups its volumes (a namespaced object cannot own a
// cluster-scoped one: the volumes go with the group, and the cache's
// finalizer deletes them).
func Volumes(c v1alpha1.ModelCache, groups []*v1alpha1.LocalModelNodeGroup, byNamespace map[string][]string, jobNamespace string) []Volume {
	ref := CacheRef(c)
	folder := v1alpha1.CopyKey(c.GetNamespace(), c.CacheSpec().SourceModelUri)
	labels := map[string]string{modelcache.CacheLabel: c.GetName()}
	if ns := c.GetNamespace(); ns != "" {
		labels = map[string]string{modelcache.NamespaceCacheLabel: c.GetName(), modelcache.NamespaceCacheNamespaceLabel: ns}
	}
	var out []Volume
	for _, g := range groups {
		spec := &groupSpec{Name: g.Name, Volume: g.Spec.PersistentVolumeSpec, Claim: g.Spec.PersistentVolumeClaimSpec}
		volumeOwner := ref
		if ns := c.GetNamespace(); ns != "" {
			volumeOwner = GroupRef(g)
			claim := modelcache.NamespaceDownloadClaimName(c.GetName(), g.Name)
			out = append(out, Volume{Group: spec, VolumeName: modelcache.FolderVolumeName(claim, ns), Folder: folder,
				Claim: types.NamespacedName{Namespace: ns, Name: claim}, Labels: labels, ClaimOwner: ref, VolumeOwner: volumeOwner})
		} else {
			out = append(out, Volume{Group: spec, VolumeName: modelcache.DownloadVolumeName(c.GetName(), g.Name),
				Claim:  types.NamespacedName{Namespace: jobNamespace, Name: modelcache.ClaimName(c.GetName(), g.Name)},
				Labels: labels, VolumeOwner: ref, ClaimOwner: ref})
		}
		claim := modelcache.ServingClaimName(c, g.Name)
		for _, ns := range slices.Sorted(maps.Keys(byNamespace)) {
			if !slices.Contains(byNamespace[ns], g.Name) {
				continue
			}
			out = append(out, Volume{Group: spec, VolumeName: modelcache.FolderVolumeName(claim, ns), Folder: folder, ReadOnly: true,
				Claim: types.NamespacedName{Namespace: ns, Name: claim}, Labels: labels, VolumeOwner: volumeOwner, ClaimOwner: ref})
		}
	}
	return out
}
