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
	return usage(group, caches, skip, func(v1alpha1.ModelCache) bool { return true })
}

// usage sums the caches on group that count (see UsageOf).
func usage(group string, caches []v1alpha1.ModelCache, skip string, counts func(v1alpha1.ModelCache) bool) Usage {
	var u Usage
	seen := map[string]bool{}
	for _, c := range caches {
		spec := c.CacheSpec()
		key := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
		if key == skip || c.GetDeletionTimestamp() != nil || !slices.Contains(spec.NodeGroups, group) || !counts(c) {
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
// fits. A cache of a URI already counted takes no more room. A namespace's
// cache (namespace not "") must also fit in the namespace's share of the
// group (NamespaceStorageLimit), and its refusal names only that
// namespace's caches: what other tenants cache is not theirs to read.
func CheckRoom(g *v1alpha1.LocalModelNodeGroup, namespace, uri string, size resource.Quantity, others []v1alpha1.ModelCache, skip string) string {
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
	all := UsageOf(g.Name, others, skip)
	if namespace == "" {
		if total := plus(all.Used, size); total.Cmp(limit) > 0 {
			return fmt.Sprintf("node group %s has a storageLimit of %s and its caches take %s (%s): %s more makes %s",
				g.Name, limit.String(), all.Used.String(), strings.Join(all.Parts, ", "), size.String(), total.String())
		}
		return ""
	}
	own := usage(g.Name, others, skip, func(c v1alpha1.ModelCache) bool { return c.GetNamespace() == namespace })
	share := g.Spec.NamespaceShare()
	if total := plus(own.Used, size); total.Cmp(share) > 0 {
		return fmt.Sprintf("the caches of namespace %s may take %s of node group %s (namespaceStorageLimit) and take %s (%s): %s more makes %s",
			namespace, share.String(), g.Name, own.Used.String(), partsOrNone(own.Parts), size.String(), total.String())
	}
	if total := plus(all.Used, size); total.Cmp(limit) > 0 {
		return fmt.Sprintf("node group %s has a storageLimit of %s and its caches take %s, of which namespace %s's take %s (%s): %s more makes %s",
			g.Name, limit.String(), all.Used.String(), namespace, own.Used.String(), partsOrNone(own.Parts), size.String(), total.String())
	}
	return ""
}

// plus is a + b.
func plus(a, b resource.Quantity) resource.Quantity {
	sum := a.DeepCopy()
	sum.Add(b)
	return sum
}

// partsOrNone lists parts, or says there are none.
func partsOrNone(parts []string) string {
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
