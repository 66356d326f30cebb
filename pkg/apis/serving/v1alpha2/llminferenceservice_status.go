package v1alpha2

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// LLMInferenceServiceStatus is the observed state of an LLMInferenceService.
type LLMInferenceServiceStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready and the conditions it is made of.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// URL is where clients send requests: the first external address, else
	// the first address.
	// +optional
	URL string `json:"url,omitempty"`
	// Addresses are the addresses the service is reached at.
	// +optional
	// +listType=atomic
	Addresses []Address `json:"addresses,omitempty"`
	// Router is the networking Serval observed: the Gateways and routes, the
	// InferencePool and the picker's Service.
	// +optional
	Router *RouterStatus `json:"router,omitempty"`
	// Workloads are the workloads Serval observed.
	// +optional
	Workloads *WorkloadStatus `json:"workloads,omitempty"`
	// AppliedConfigRefs are the presets merged, lowest precedence first.
	// +optional
	// +listType=atomic
	AppliedConfigRefs []AppliedConfigRef `json:"appliedConfigs,omitempty"`
}

// Address is one address of the service.
type Address struct {
	// Name says which address it is (gateway-external, cluster-local...).
	// +optional
	Name string `json:"name,omitempty"`
	// URL of the address.
	URL string `json:"url"`
}

// RouterStatus is the networking Serval observed.
type RouterStatus struct {
	// Gateways the route attaches to, each with its routes.
	// +optional
	// +listType=atomic
	Gateways []ObservedGateway `json:"gateways,omitempty"`
	// Scheduler is the InferencePool and the picker's Service.
	// +optional
	Scheduler *ObservedSchedulerStatus `json:"scheduler,omitempty"`
	// Group is the routing group the route splits traffic across.
	// +optional
	Group *GroupStatus `json:"group,omitempty"`
}

// GroupStatus is a routing group as the service's route sends it traffic.
type GroupStatus struct {
	// Name of the group.
	Name string `json:"name"`
	// Members are the services that share the traffic, this one among them,
	// by name.
	// +optional
	// +listType=atomic
	Members []GroupMemberStatus `json:"members,omitempty"`
}

// GroupMemberStatus is one member of a routing group.
type GroupMemberStatus struct {
	// Name of the LLMInferenceService.
	Name string `json:"name"`
	// Weight is its share of the traffic.
	Weight int32 `json:"weight"`
	// Stopped members take no traffic.
	// +optional
	Stopped bool `json:"stopped,omitempty"`
	// BackendRef is where its share goes: its InferencePool, or its
	// workload Service.
	// +optional
	BackendRef *gwapiv1.BackendObjectReference `json:"backendRef,omitempty"`
}

// ObjectReference names an object with its group and kind.
type ObjectReference struct {
	// Group of the object ("" for the core group).
	// +optional
	Group string `json:"group,omitempty"`
	// Kind of the object.
	Kind string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ObservedGateway is a Gateway and the routes attached to it.
type ObservedGateway struct {
	ObjectReference `json:",inline"`
	// HTTPRoutes attached through this Gateway.
	// +optional
	// +listType=atomic
	HTTPRoutes []ObjectReference `json:"httpRoutes,omitempty"`
}

// ObservedSchedulerStatus is the InferencePool and the picker's Service.
type ObservedSchedulerStatus struct {
	// InferencePool in use.
	// +optional
	InferencePool *ObjectReference `json:"inferencePool,omitempty"`
	// Service of the endpoint picker.
	// +optional
	Service *ObjectReference `json:"service,omitempty"`
}

// WorkloadStatus is the workloads Serval observed.
type WorkloadStatus struct {
	// Primary is the main workload.
	// +optional
	Primary *ObservedWorkloadStatus `json:"primary,omitempty"`
	// Service in front of the main workload.
	// +optional
	Service *ObjectReference `json:"service,omitempty"`
	// Scheduler is the endpoint picker's Deployment.
	// +optional
	Scheduler *ObservedWorkloadStatus `json:"scheduler,omitempty"`
	// ModelCache is the model cache the model is mounted from instead of
	// downloaded. (Serval's addition.)
	// +optional
	ModelCache *v1beta1.ModelCacheRef `json:"modelCache,omitempty"`
}

// ObservedWorkloadStatus is a workload and its ready replicas.
type ObservedWorkloadStatus struct {
	ObjectReference `json:",inline"`
	// ReadyReplicas of the workload.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
}

// AppliedConfigSource says why a preset was merged.
// +kubebuilder:validation:Enum=Preset;UserRef
type AppliedConfigSource string

// The sources of a merged preset.
const (
	// AppliedConfigSourcePreset: a well-known preset, by the service's shape.
	AppliedConfigSourcePreset AppliedConfigSource = "Preset"
	// AppliedConfigSourceUserRef: named in spec.baseRefs.
	AppliedConfigSourceUserRef AppliedConfigSource = "UserRef"
)

// AppliedConfigRef is a preset that was merged, and where it was found.
type AppliedConfigRef struct {
	// Name of the LLMInferenceServiceConfig.
	Name string `json:"name"`
	// Namespace it was found in: the service's, or Serval's.
	Namespace string `json:"namespace"`
	// Source says why it was merged.
	Source AppliedConfigSource `json:"source"`
}

// The condition types of an LLMInferenceService, KServe's.
const (
	ConditionReady             = "Ready"
	ConditionPresetsCombined   = "PresetsCombined"
	ConditionWorkloadsReady    = "WorkloadsReady"
	ConditionMainWorkloadReady = "MainWorkloadReady"
	// ConditionWorkerWorkloadReady takes MainWorkloadReady's place when
	// the main workload runs across nodes (a LeaderWorkerSet).
	ConditionWorkerWorkloadReady = "WorkerWorkloadReady"
	// ConditionPrefillWorkloadReady is the prefill Deployment's.
	ConditionPrefillWorkloadReady = "PrefillWorkloadReady"
	// ConditionPrefillWorkerWorkloadReady is the prefill LeaderWorkerSet's.
	ConditionPrefillWorkerWorkloadReady = "PrefillWorkerWorkloadReady"
	// ConditionScalingReady is the main workload's autoscaler's.
	ConditionScalingReady = "ScalingReady"
	// ConditionMainWorkloadScaledToZero is True while a main workload that
	// scales from zero (the activator holds its requests) runs no replica,
	// since its LastTransitionTime; absent otherwise.
	ConditionMainWorkloadScaledToZero = "MainWorkloadScaledToZero"
	// ConditionPrefillScalingReady is the prefill workload's autoscaler's.
	ConditionPrefillScalingReady    = "PrefillScalingReady"
	ConditionRouterReady            = "RouterReady"
	ConditionSchedulerWorkloadReady = "SchedulerWorkloadReady"
	ConditionTokenizerReady         = "TokenizerReady"
	ConditionGatewaysReady          = "GatewaysReady"
	ConditionHTTPRoutesReady        = "HTTPRoutesReady"
	ConditionInferencePoolReady     = "InferencePoolReady"
	ConditionGroupReady             = "GroupReady"
	ConditionGroupDegraded          = "GroupDegraded"
)

// A preset's condition types and finalizer, KServe's: Ready says whether
// the stored preset passes admission's checks; ConfigInUse whether
// services use it. The finalizer holds the deletion of a preset in use
// until no service uses it.
const (
	ConditionConfigInUse = "ConfigInUse"
	ConfigFinalizer      = "serving.serval.dev/llmisvcconfig-finalizer"
)

// LLMInferenceServiceLabel names the LLMInferenceService a child belongs to.
const LLMInferenceServiceLabel = "serving.serval.dev/llminferenceservice"
