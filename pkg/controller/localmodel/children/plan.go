package children

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Volumes are the volumes and claims of a cache on its groups.
//
// A LocalModelCache has one claim per group in the download Jobs'
// namespace, bound to the volume {cache}-{group}-download, and one per
// group in every namespace whose services mount it, bound to
// {cache}-{group}-{namespace} (KServe's names); it owns them all. A
// LocalModelNamespaceCache has one claim per group in its own namespace,
// which its downloads write to and its services mount; it owns the claim,
// and its group the volume (a namespaced object cannot own a cluster-scoped
// one: the volume goes with the group, and the cache's finalizer deletes
// it).
func Volumes(c v1alpha1.ModelCache, groups []*v1alpha1.LocalModelNodeGroup, byNamespace map[string][]string, jobNamespace string) []Volume {
	ref := CacheRef(c)
	var out []Volume
	for _, g := range groups {
		spec := &groupSpec{Name: g.Name, Volume: g.Spec.PersistentVolumeSpec, Claim: g.Spec.PersistentVolumeClaimSpec}
		claim := ClaimName(c.GetName(), g.Name)
		if ns := c.GetNamespace(); ns != "" {
			out = append(out, Volume{Group: spec, VolumeName: ServingVolumeName(c.GetName(), g.Name, ns),
				Claim:  types.NamespacedName{Namespace: ns, Name: claim},
				Labels: map[string]string{NamespaceCacheLabel: c.GetName(), NamespaceCacheNamespaceLabel: ns}, ClaimOwner: ref,
				VolumeOwner: GroupRef(g)})
			continue
		}
		labels := map[string]string{CacheLabel: c.GetName()}
		out = append(out, Volume{Group: spec, VolumeName: DownloadVolumeName(c.GetName(), g.Name),
			Claim: types.NamespacedName{Namespace: jobNamespace, Name: claim}, Labels: labels, VolumeOwner: ref, ClaimOwner: ref})
		for _, ns := range slices.Sorted(maps.Keys(byNamespace)) {
			if ns == jobNamespace || !slices.Contains(byNamespace[ns], g.Name) {
				// In the Jobs' namespace the services mount the download
				// claim.
				continue
			}
			out = append(out, Volume{Group: spec, VolumeName: ServingVolumeName(c.GetName(), g.Name, ns),
				Claim: types.NamespacedName{Namespace: ns, Name: claim}, Labels: labels, VolumeOwner: ref, ClaimOwner: ref})
		}
	}
	return out
}
