package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The annotations of a service that concern the model caches (KServe's,
// under Serval's prefix).
const (
	// NodeGroupAnnotation names the node group whose cached copy a service
	// uses; without it, a cache's first group.
	NodeGroupAnnotation = "serving.serval.dev/nodegroup"
	// DisableLocalModelAnnotation, present with any value, keeps a service
	// off the caches: it downloads its model as usual.
	DisableLocalModelAnnotation = "serving.serval.dev/disable-localmodel"
)

// ModelsFolder is the folder of a node group's volume that holds the
// models, one sub-folder per storage key.
const ModelsFolder = "models"

// StorageKey is the folder a model from uri is kept in, on every node and
// for every cache of that URI (KServe's: the first 16 hex digits of the
// URI's SHA-256), so two caches of one URI share one copy.
func StorageKey(uri string) string {
	sum := sha256.Sum256([]byte(uri))
	return hex.EncodeToString(sum[:])[:16]
}

// CopyKey is the folder of the copy a cache of namespace ("" for a
// LocalModelCache) keeps of uri. Caches share a copy only within one
// owner scope: the cluster caches of a URI share StorageKey(uri), as
// KServe's do; a namespace's caches of a URI share a copy of their own,
// which no cluster cache and no other namespace's cache ever uses. So a
// namespace user's cache, downloaded with the user's credentials, can
// never stand in for an administrator's model, nor the reverse.
func CopyKey(namespace, uri string) string {
	if namespace == "" {
		return StorageKey(uri)
	}
	sum := sha256.Sum256([]byte("namespace/" + namespace + "\x00" + uri))
	return hex.EncodeToString(sum[:])[:16]
}

// MatchStorageURI reports whether a service's storage URI is a cache's URI
// or under it, as KServe matches them: trailing slashes aside, equal, or
// longer with a "/" right after the cache's URI.
func MatchStorageURI(cacheURI, storageURI string) bool {
	cacheURI = strings.TrimSuffix(cacheURI, "/")
	storageURI = strings.TrimSuffix(storageURI, "/")
	if !strings.HasPrefix(storageURI, cacheURI) {
		return false
	}
	return len(storageURI) == len(cacheURI) || storageURI[len(cacheURI)] == '/'
}

// ModelCache is a LocalModelCache or a LocalModelNamespaceCache: what the
// controller, admission and the services that use a cache need of either.
// +kubebuilder:object:generate=false
type ModelCache interface {
	client.Object
	CacheSpec() *LocalModelCacheSpec
	CacheStatus() *LocalModelCacheStatus
}

// CacheSpec returns the cache's spec.
func (c *LocalModelCache) CacheSpec() *LocalModelCacheSpec { return &c.Spec }

// CacheStatus returns the cache's status.
func (c *LocalModelCache) CacheStatus() *LocalModelCacheStatus { return &c.Status }

// CacheSpec returns the cache's spec.
func (c *LocalModelNamespaceCache) CacheSpec() *LocalModelCacheSpec {
	return &c.Spec.LocalModelCacheSpec
}

// ClaimOf is the claim a cache keeps its one copy on (a namespace cache's
// pvcRef); "" for a cache on node groups.
func ClaimOf(c ModelCache) string {
	if n, ok := c.(*LocalModelNamespaceCache); ok {
		return n.Spec.PVCRef
	}
	return ""
}

// CacheStatus returns the cache's status.
func (c *LocalModelNamespaceCache) CacheStatus() *LocalModelCacheStatus { return &c.Status }

// StatusKey is the key of a cache's model in a LocalModelNode's status:
// its name, or namespace/name for a namespace cache (KServe's).
func StatusKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// StatusKey is the key of the model in its node's status.
func (m *LocalModelInfo) StatusKey() string { return StatusKey(m.Namespace, m.ModelName) }

// CacheKindOf is the kind of a cache in a namespace ("" for cluster).
func CacheKindOf(namespace string) string {
	if namespace == "" {
		return "LocalModelCache"
	}
	return "LocalModelNamespaceCache"
}

// The labels that name a model cache kind's owner on its children.
const (
	// LocalModelCacheLabel names a LocalModelCache.
	LocalModelCacheLabel = "serving.serval.dev/localmodelcache"
	// LocalModelNamespaceCacheLabel names a LocalModelNamespaceCache.
	LocalModelNamespaceCacheLabel = "serving.serval.dev/localmodelnamespacecache"
	// LocalModelNodeGroupLabel names a LocalModelNodeGroup.
	LocalModelNodeGroupLabel = "serving.serval.dev/localmodelnodegroup"
)
