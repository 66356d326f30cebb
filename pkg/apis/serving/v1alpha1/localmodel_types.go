package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalModelNodeGroup is a set of nodes that keep models on local disk
// (KServe's API): the nodes its PersistentVolume template's node affinity
// selects, the volume template each cache on it gets, and the disk space
// the caches on it may use together.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=localmodelnodegroups,scope=Cluster,categories=serval
// +kubebuilder:printcolumn:name="Limit",type="string",JSONPath=".spec.storageLimit"
// +kubebuilder:printcolumn:name="Used",type="string",JSONPath=".status.used"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=".status.available"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalModelNodeGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocalModelNodeGroupSpec   `json:"spec,omitempty"`
	Status LocalModelNodeGroupStatus `json:"status,omitempty"`
}

// LocalModelNodeGroupSpec is a node group's nodes, volumes and limit.
type LocalModelNodeGroupSpec struct {
	// StorageLimit is the disk space the caches on the group may use
	// together, on each node: admission refuses a cache whose modelSize,
	// added to the other caches', would exceed it.
	StorageLimit resource.Quantity `json:"storageLimit"`
	// NamespaceStorageLimit is the disk space the LocalModelNamespaceCaches
	// of any one namespace may use together on the group, on each node,
	// within storageLimit: one tenant's caches cannot take the room that
	// the cluster's and other namespaces' caches need. Unset, it is half
	// the storageLimit. (Serval's addition.)
	// +optional
	NamespaceStorageLimit *resource.Quantity `json:"namespaceStorageLimit,omitempty"`
	// PersistentVolumeSpec is the template of the volumes that hold the
	// models. Its nodeAffinity selects the group's nodes (required); a
	// hostPath or local volume keeps the models on each node's disk.
	// +kubebuilder:validation:XValidation:rule="has(self.nodeAffinity) && has(self.nodeAffinity.required)",message="persistentVolumeSpec.nodeAffinity.required selects the group's nodes and is required"
	PersistentVolumeSpec corev1.PersistentVolumeSpec `json:"persistentVolumeSpec"`
	// PersistentVolumeClaimSpec is the template of the claims bound to
	// those volumes, for the download Jobs and for the model servers.
	PersistentVolumeClaimSpec corev1.PersistentVolumeClaimSpec `json:"persistentVolumeClaimSpec"`
}

// NamespaceShare is the most the caches of one namespace may take of the
// group: NamespaceStorageLimit, or half the StorageLimit when unset.
func (s *LocalModelNodeGroupSpec) NamespaceShare() resource.Quantity {
	if s.NamespaceStorageLimit != nil {
		return s.NamespaceStorageLimit.DeepCopy()
	}
	return *resource.NewQuantity(s.StorageLimit.Value()/2, resource.BinarySI)
}

// LocalModelNodeGroupStatus is the space the caches on a group take.
type LocalModelNodeGroupStatus struct {
	// Used is the sum of the modelSize of the caches on the group.
	// +optional
	Used resource.Quantity `json:"used,omitempty"`
	// Available is storageLimit less used.
	// +optional
	Available resource.Quantity `json:"available,omitempty"`
	// Nodes are the nodes the group selects, by name.
	// +optional
	Nodes []string `json:"nodes,omitempty"`
}

// LocalModelNodeGroupList is a list of LocalModelNodeGroups.
//
// +kubebuilder:object:root=true
type LocalModelNodeGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalModelNodeGroup `json:"items"`
}

// LocalModelCache is a model kept on the disks of the nodes of one or more
// node groups (KServe's API): an InferenceService or LLMInferenceService
// whose storage URI is the cache's, or under it, mounts the cached copy
// instead of downloading the model.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=localmodelcaches,scope=Cluster,categories=serval
// +kubebuilder:printcolumn:name="URI",type="string",JSONPath=".spec.sourceModelUri"
// +kubebuilder:printcolumn:name="Size",type="string",JSONPath=".spec.modelSize"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.copies.available"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.copies.total"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalModelCache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="has(self.nodeGroups) && size(self.nodeGroups) > 0",message="nodeGroups needs at least one node group"
	Spec   LocalModelCacheSpec   `json:"spec,omitempty"`
	Status LocalModelCacheStatus `json:"status,omitempty"`
}

// LocalModelCacheSpec is the model a cache keeps and where.
type LocalModelCacheSpec struct {
	// SourceModelUri is where the model is downloaded from; a service's
	// storage URI matches it when equal or under it (after a "/").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sourceModelUri is immutable"
	SourceModelUri string `json:"sourceModelUri"`
	// ModelSize is the model's size on disk; it counts against the node
	// groups' storageLimit.
	ModelSize resource.Quantity `json:"modelSize"`
	// NodeGroups are the groups whose nodes keep the model; a service
	// without the serving.serval.dev/nodegroup annotation uses the first.
	// Required but for a LocalModelNamespaceCache on a claim (pvcRef).
	// +optional
	NodeGroups []string `json:"nodeGroups,omitempty"`
	// ServiceAccountName is the account whose credentials the download
	// uses, in the download Jobs' namespace.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Storage names the storage-config key whose credentials the download
	// uses.
	// +optional
	Storage *LocalModelStorageSpec `json:"storage,omitempty"`
}

// LocalModelStorageSpec is a storage-config entry and parameters over it.
type LocalModelStorageSpec struct {
	// StorageKey is the key in the storage-config Secret.
	// +optional
	StorageKey *string `json:"key,omitempty"`
	// Parameters override the entry's values.
	// +optional
	Parameters *map[string]string `json:"parameters,omitempty"`
}

// LocalModelCacheStatus is where a cache's copies are and who uses it.
type LocalModelCacheStatus struct {
	// NodeStatus is the copy's state on each node of its groups.
	// +optional
	NodeStatus map[string]NodeStatus `json:"nodeStatus,omitempty"`
	// ModelCopies counts the copies.
	// +optional
	ModelCopies *ModelCopies `json:"copies,omitempty"`
	// InferenceServices are the InferenceServices that mount the cache.
	// +optional
	InferenceServices []NamespacedName `json:"inferenceServices,omitempty"`
	// LLMInferenceServices are the LLMInferenceServices that mount it.
	// +optional
	LLMInferenceServices []NamespacedName `json:"llmInferenceServices,omitempty"`
	// Conditions: Ready is True once every ready node of its groups holds
	// the model; its reason is Downloaded, Downloading, DownloadFailed
	// (the message names each failing node and its Job's reason),
	// NodeGroupNotFound or NoNodes. (Serval's addition.)
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// NamespacedName names a namespaced object.
type NamespacedName struct {
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// NodeStatus is a cache's copy's state on one node.
// +kubebuilder:validation:Enum="";NodeNotReady;NodeDownloadPending;NodeDownloading;NodeDownloaded;NodeDownloadError
type NodeStatus string

// The states of a copy on a node (KServe's).
const (
	NodeNotReady        NodeStatus = "NodeNotReady"
	NodeDownloadPending NodeStatus = "NodeDownloadPending"
	NodeDownloading     NodeStatus = "NodeDownloading"
	NodeDownloaded      NodeStatus = "NodeDownloaded"
	NodeDownloadError   NodeStatus = "NodeDownloadError"
)

// ModelCopies counts a cache's copies.
type ModelCopies struct {
	// Available is the number of nodes that hold the model.
	// +optional
	Available int `json:"available,omitempty"`
	// Total is the number of nodes of its groups.
	// +optional
	Total int `json:"total,omitempty"`
	// Failed is the number of nodes whose download failed.
	// +optional
	Failed int `json:"failed,omitempty"`
}

// LocalModelCacheList is a list of LocalModelCaches.
//
// +kubebuilder:object:root=true
type LocalModelCacheList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalModelCache `json:"items"`
}

// LocalModelNamespaceCache is a LocalModelCache of one namespace (KServe's
// API): only that namespace's services use it, its downloads use that
// namespace's credentials, and it takes precedence over a cluster cache
// of the same URI.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=localmodelnamespacecaches,categories=serval
// +kubebuilder:printcolumn:name="URI",type="string",JSONPath=".spec.sourceModelUri"
// +kubebuilder:printcolumn:name="Size",type="string",JSONPath=".spec.modelSize"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.copies.available"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.copies.total"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalModelNamespaceCache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="has(self.pvcRef) != (has(self.nodeGroups) && size(self.nodeGroups) > 0)",message="set exactly one of pvcRef and nodeGroups"
	Spec   LocalModelNamespaceCacheSpec `json:"spec,omitempty"`
	Status LocalModelCacheStatus        `json:"status,omitempty"`
}

// LocalModelNamespaceCacheSpec is a cache's spec, on node groups or on a
// claim of the namespace.
type LocalModelNamespaceCacheSpec struct {
	LocalModelCacheSpec `json:",inline"`
	// PVCRef names a claim of the cache's namespace that holds the one copy
	// of the model (KServe's shared-claim cache): a ReadWriteMany
	// filesystem claim of at least modelSize. One download Job fills it;
	// the services mount it, on any node. Exclusive with nodeGroups.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="pvcRef is immutable"
	PVCRef string `json:"pvcRef,omitempty"`
}

// LocalModelNamespaceCacheList is a list of LocalModelNamespaceCaches.
//
// +kubebuilder:object:root=true
type LocalModelNamespaceCacheList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalModelNamespaceCache `json:"items"`
}

// LocalModelNode is the list of models one node keeps (KServe's API),
// named as the node. The manager writes its spec; the node agent on the
// node downloads and deletes models to match, and writes its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=localmodelnodes,scope=Cluster,categories=serval
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LocalModelNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocalModelNodeSpec   `json:"spec,omitempty"`
	Status LocalModelNodeStatus `json:"status,omitempty"`
}

// LocalModelNodeSpec is the models a node is to keep.
type LocalModelNodeSpec struct {
	// LocalModels are the models, one per cache.
	// +optional
	LocalModels []LocalModelInfo `json:"localModels"`
}

// LocalModelInfo is one model a node keeps, for one cache.
type LocalModelInfo struct {
	// SourceModelUri is where the model is downloaded from.
	SourceModelUri string `json:"sourceModelUri"`
	// ModelName is the cache's name.
	ModelName string `json:"modelName"`
	// Namespace is a LocalModelNamespaceCache's namespace; "" for a
	// LocalModelCache.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// NodeGroup is the group whose claim the download writes to.
	// +optional
	NodeGroup string `json:"nodeGroup,omitempty"`
	// ServiceAccountName is the account whose credentials the download
	// uses.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Storage names the storage-config key the download uses.
	// +optional
	Storage *LocalModelStorageSpec `json:"storage,omitempty"`
	// ModelSize is the size the cache declares, which its copy may not
	// pass (its group's storageLimit counts it). (Serval's addition.)
	// +optional
	ModelSize *resource.Quantity `json:"modelSize,omitempty"`
}

// LocalModelNodeStatus is what a node holds. Two writers share it, each
// with its own fields: the manager, which runs the download Jobs, writes
// modelStatus and models; the node agent of each group, which alone sees
// the disk, writes copies and disks (Serval's split: the agent needs no
// right on Jobs, Secrets or ServiceAccounts).
type LocalModelNodeStatus struct {
	// ModelStatus is each model's state, by status key (the cache's name,
	// or namespace/name for a namespace cache).
	// +optional
	ModelStatus map[string]ModelStatus `json:"modelStatus,omitempty"`
	// Models are each model's details, by the same key: its size on
	// disk, its digest, the downloads tried and why the last one failed.
	// (Serval's addition.)
	// +optional
	Models map[string]LocalModelDetail `json:"models,omitempty"`
	// Disks are the free space and size of the disk of each node group
	// on the node, as its agent last measured them. (Serval's addition.)
	// +optional
	Disks map[string]LocalModelDisk `json:"disks,omitempty"`
	// Copies are what the node agents found on the disk for each model,
	// by the same key: written by the agents only. (Serval's addition.)
	// +optional
	Copies map[string]LocalModelCopy `json:"copies,omitempty"`
	// InUse are the model folders ({storage key}, see CopyKey) that
	// volumes of services still bind, whatever the list says: their
	// agent deletes none of them. Written by the manager. (Serval's
	// addition.)
	// +optional
	// +listType=set
	InUse []string `json:"inUse,omitempty"`
}

// CopyState is what a node agent found of a model's folder.
// +kubebuilder:validation:Enum=Absent;Measuring;Present;Failed
type CopyState string

// The states of a copy on a node's disk.
const (
	// CopyAbsent: the folder is missing or empty.
	CopyAbsent CopyState = "Absent"
	// CopyMeasuring: the folder holds files, which the agent is measuring.
	CopyMeasuring CopyState = "Measuring"
	// CopyPresent: the folder holds the model, of the size and digest
	// given.
	CopyPresent CopyState = "Present"
	// CopyFailed: the folder holds what no model may (a FIFO, a device),
	// more than the cache declares, or files that changed since they were
	// measured; the reason says which.
	CopyFailed CopyState = "Failed"
)

// LocalModelCopy is one model's folder on one node, as its agent found it.
type LocalModelCopy struct {
	// State is what the agent found.
	State CopyState `json:"state"`
	// Job is the download Job (the manager's models[key].job) the agent
	// looked after: a report of an older Job does not count for a newer.
	// +optional
	Job string `json:"job,omitempty"`
	// Bytes and Digest are the copy's size and SHA-256 when it was first
	// measured after its download; the agent compares later measures
	// with the digest.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// +optional
	Digest string `json:"digest,omitempty"`
	// Reason and Message say why the copy failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// LocalModelDisk is a node group's disk on one node.
type LocalModelDisk struct {
	// Available is the free space; Capacity the disk's size.
	Available resource.Quantity `json:"available"`
	Capacity  resource.Quantity `json:"capacity"`
}

// LocalModelDetail is one model on one node.
type LocalModelDetail struct {
	// Bytes is the model's size on disk, once downloaded.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// Digest is the SHA-256 of the model's files (their paths and
	// contents, in path order), once downloaded.
	// +optional
	Digest string `json:"digest,omitempty"`
	// Attempts is the number of download Jobs run for the model.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Job is the latest download Job's name (in the cache's namespace, or
	// the Jobs' namespace for a cluster cache); JobRunning says it has
	// not ended, and its agent measures nothing meanwhile.
	// +optional
	Job string `json:"job,omitempty"`
	// +optional
	JobRunning bool `json:"jobRunning,omitempty"`
	// Reason and Message say why the last download failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ModelStatus is a model's state on a node.
// +kubebuilder:validation:Enum="";ModelDownloadPending;ModelDownloading;ModelDownloaded;ModelDownloadError
type ModelStatus string

// The states of a model on a node (KServe's).
const (
	ModelDownloadPending ModelStatus = "ModelDownloadPending"
	ModelDownloading     ModelStatus = "ModelDownloading"
	ModelDownloaded      ModelStatus = "ModelDownloaded"
	ModelDownloadError   ModelStatus = "ModelDownloadError"
)

// LocalModelNodeList is a list of LocalModelNodes.
//
// +kubebuilder:object:root=true
type LocalModelNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalModelNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&LocalModelNodeGroup{}, &LocalModelNodeGroupList{},
		&LocalModelCache{}, &LocalModelCacheList{},
		&LocalModelNamespaceCache{}, &LocalModelNamespaceCacheList{},
		&LocalModelNode{}, &LocalModelNodeList{})
}
