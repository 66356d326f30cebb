package localmodel

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Usage is what the caches on a group take of its disk space.
type Usage struct {
	// Used is the sum of their modelSize, each model counted once: caches
	// of one URI share one copy.
	Used resource.Quantity
	// Parts names each model counted and its size, for messages.
	Parts []string
}

// UsageOf sums the caches on group, leaving out the cache skip (namespace/
// name; "" for none) and caches being deleted.
func UsageOf(group string, caches []v1alpha1.ModelCache, skip string) Usage {
	var u Usage
	seen := map[string]bool{}
	for _, c := range caches {
		spec := c.CacheSpec()
		key := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
		if key == skip || c.GetDeletionTimestamp() != nil || !slices.Contains(spec.NodeGroups, group) {
			continue
		}
		if sk := v1alpha1.CopyKey(c.GetNamespace(), spec.SourceModelUri); !seen[sk] {
			seen[sk] = true
			u.Used.Add(spec.ModelSize)
			u.Parts = append(u.Parts, key+": "+spec.ModelSize.String())
		}
	}
	slices.Sort(u.Parts)
	return u
}

// CheckRoom says why a cache of size does not fit on g next to the caches
// already there (their usage, the cache itself left out), or "" when it
// fits. A cache of a URI already counted takes no more room.
func CheckRoom(g *v1alpha1.LocalModelNodeGroup, namespace, uri string, size resource.Quantity, others []v1alpha1.ModelCache, skip string) string {
	u := UsageOf(g.Name, others, skip)
	for _, c := range others {
		key := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
		if key != skip && c.GetDeletionTimestamp() == nil && slices.Contains(c.CacheSpec().NodeGroups, g.Name) &&
			v1alpha1.CopyKey(c.GetNamespace(), c.CacheSpec().SourceModelUri) == v1alpha1.CopyKey(namespace, uri) {
			return ""
		}
	}
	limit := g.Spec.StorageLimit
	if size.Cmp(limit) > 0 {
		return fmt.Sprintf("modelSize %s exceeds the storageLimit %s of node group %s", size.String(), limit.String(), g.Name)
	}
	total := u.Used.DeepCopy()
	total.Add(size)
	if total.Cmp(limit) <= 0 {
		return ""
	}
	return fmt.Sprintf("node group %s has a storageLimit of %s and its caches take %s (%s): %s more makes %s",
		g.Name, limit.String(), u.Used.String(), strings.Join(u.Parts, ", "), size.String(), total.String())
}
