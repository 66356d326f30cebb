package children

import (
	"path"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// The labels on a cache's volumes and claims, and on the node agent's
// DaemonSets: the component label every child carries (the manager's cache
// holds only such objects) and the owner's.
const (
	// Component is the component label's value on every object here.
	Component = "localmodel"
	// CacheLabel names a LocalModelCache on its children.
	CacheLabel = v1alpha1.LocalModelCacheLabel
	// NamespaceCacheLabel names a LocalModelNamespaceCache on its children.
	NamespaceCacheLabel = v1alpha1.LocalModelNamespaceCacheLabel
	// NamespaceCacheNamespaceLabel is the namespace of that cache, on its
	// volumes (cluster-scoped, so they carry it as a label).
	NamespaceCacheNamespaceLabel = "serving.serval.dev/localmodelnamespacecache-namespace"
	// GroupNameLabel names the group a volume or claim is made for. It is
	// not NodeGroupLabel: a namespace cache's volume is owned by its group
	// but is not one of the group's own children, which the group prunes.
	GroupNameLabel = "serving.serval.dev/localmodel-group"
	// NodeGroupLabel names a LocalModelNodeGroup on its children.
	NodeGroupLabel = v1alpha1.LocalModelNodeGroupLabel
)

// Finalizer holds a cache until its models are taken off its nodes'
// lists (and, for a namespace cache, its volumes deleted).
const Finalizer = "serving.serval.dev/localmodel"

// ClaimName is the claim that holds a cache's models on a group, in every
// namespace it is mounted in: the download Jobs' namespace and the
// namespaces of the services that use it (KServe's name).
func ClaimName(cache, group string) string { return cache + "-" + group }

// DownloadVolumeName is the volume bound to a cluster cache's claim in the
// download Jobs' namespace (KServe's name).
func DownloadVolumeName(cache, group string) string { return cache + "-" + group + "-download" }

// ServingVolumeName is the volume bound to a cache's claim in a
// namespace: where its services mount it or, for a namespace cache, its
// downloads write too (KServe's name).
func ServingVolumeName(cache, group, namespace string) string {
	return cache + "-" + group + "-" + namespace
}

// ModelPath is the path inside a group's volume of the copy the caches of
// namespace ("" for the cluster caches) keep of uri (see CopyKey).
func ModelPath(namespace, uri string) string {
	return path.Join(v1alpha1.ModelsFolder, v1alpha1.CopyKey(namespace, uri))
}
