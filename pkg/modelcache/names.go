package modelcache

import (
	"path"
	"strings"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// The labels of the objects a model cache makes: the component label every
// child carries (the manager's cache holds only such objects) and the
// owner's.
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
	// GroupNameLabel names the group a volume, claim or download Job is
	// made for. It is not NodeGroupLabel: a namespace cache's volume is
	// owned by its group but is not one of the group's own children, which
	// the group prunes.
	GroupNameLabel = "serving.serval.dev/localmodel-group"
	// NodeGroupLabel names a LocalModelNodeGroup on its children.
	NodeGroupLabel = v1alpha1.LocalModelNodeGroupLabel
	// CopyLabel names, on a volume, the model folder ({storage key}) it
	// binds; the manager tells each agent which folders are still bound.
	CopyLabel = "serving.serval.dev/localmodel-copy"
)

// The labels of a download Job (KServe's): the cache's name, its namespace
// for a namespace cache, the node.
const (
	ModelLabel          = "model"
	ModelNamespaceLabel = "modelNamespace"
	NodeLabel           = "node"
)

// Finalizer holds a cache until its models are taken off its nodes'
// lists (and, for a namespace cache, its volumes deleted).
const Finalizer = "serving.serval.dev/localmodel"

// ClaimName is the claim a cluster cache's downloads write to on a group,
// in the download Jobs' namespace (KServe's name).
func ClaimName(cache, group string) string { return cache + "-" + group }

// DownloadVolumeName is the volume bound to a cluster cache's download
// claim (KServe's name): the group's whole disk, in Serval's own namespace
// only.
func DownloadVolumeName(cache, group string) string { return cache + "-" + group + "-download" }

// The prefixes of the claims that bind one model folder read-only. The
// chart's admission policy refuses a pod that mounts a claim named so
// writable: a namespace admin cannot widen a service's mount.
const (
	ServingClaimPrefix          = "serval-model-"
	NamespaceServingClaimPrefix = "serval-nsmodel-"
	// NamespaceDownloadClaimPrefix names the claim a namespace cache's
	// downloads write through: its own folder only, in its own namespace.
	NamespaceDownloadClaimPrefix = "serval-nsdownload-"
)

// ServingClaimName is the claim through which the services of a namespace
// mount a cache's copy on a group: one model folder, read-only.
func ServingClaimName(c v1alpha1.ModelCache, group string) string {
	if c.GetNamespace() != "" {
		return NamespaceServingClaimPrefix + c.GetName() + "-" + group
	}
	return ServingClaimPrefix + c.GetName() + "-" + group
}

// NamespaceDownloadClaimName is the claim a namespace cache's downloads
// write to on a group.
func NamespaceDownloadClaimName(cache, group string) string {
	return NamespaceDownloadClaimPrefix + cache + "-" + group
}

// FolderVolumeName is the volume bound to a claim of one model folder:
// named after the claim and its namespace, which together are unique.
func FolderVolumeName(claim, namespace string) string {
	return strings.TrimSuffix(claim+"-"+namespace, "-")
}

// ModelPath is the path inside a group's volume of the copy the caches of
// namespace ("" for the cluster caches) keep of uri (see CopyKey).
func ModelPath(namespace, uri string) string {
	return path.Join(v1alpha1.ModelsFolder, v1alpha1.CopyKey(namespace, uri))
}

// DownloadContainer is a download Job's container.
const DownloadContainer = "download"
