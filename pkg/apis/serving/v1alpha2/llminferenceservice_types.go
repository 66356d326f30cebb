package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The pod templates and the Gateway API and Inference Extension specs below
// are their upstream Go types, so that presets merge as Kubernetes merges
// them (containers by name), but schemaless in the CRD: typed in full they
// would make it megabytes large, beyond what `kubectl apply` can store.
// The CRD types the fields whose values could fail to decode (hack/crdguard),
// and the webhook decodes the rest strictly.

// LLMInferenceService serves a large language model: vLLM workloads built
// from the presets (LLMInferenceServiceConfig) merged under the service's
// own spec, and a route to them through a Gateway, with an InferencePool
// and its endpoint picker in between when the router has a scheduler.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=llminferenceservices,shortName=llmisvc,categories=serval
// +kubebuilder:printcolumn:name="URL",type="string",JSONPath=".status.url"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LLMInferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LLMInferenceServiceSpec `json:"spec,omitempty"`
	// +optional
	Status LLMInferenceServiceStatus `json:"status,omitempty"`

	// DecodeError says why the stored spec did not decode; the spec is then
	// empty. Never stored.
	DecodeError string `json:"-"`
}

// LLMInferenceServiceList is a list of LLMInferenceServices.
//
// +kubebuilder:object:root=true
type LLMInferenceServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LLMInferenceService `json:"items"`
}

// LLMInferenceServiceConfig is a preset: a partial LLMInferenceService spec
// that services merge under their own, the well-known presets by the shape
// of the service and others named in spec.baseRefs. Its strings may hold
// Go templates over the service ({{ .ObjectMeta.Name }}).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=llminferenceserviceconfigs,categories=serval
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type LLMInferenceServiceConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LLMInferenceServiceSpec `json:"spec,omitempty"`
	// +optional
	Status LLMInferenceServiceConfigStatus `json:"status,omitempty"`

	// DecodeError says why the stored spec did not decode. Never stored.
	DecodeError string `json:"-"`
}

// LLMInferenceServiceConfigList is a list of LLMInferenceServiceConfigs.
//
// +kubebuilder:object:root=true
type LLMInferenceServiceConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LLMInferenceServiceConfig `json:"items"`
}

// LLMInferenceServiceConfigStatus is a preset's observed state.
type LLMInferenceServiceConfigStatus struct {
	// Conditions of the preset.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReferencedBy lists the services that use the preset.
	// +optional
	// +listType=atomic
	ReferencedBy []UntypedObjectReference `json:"referencedBy,omitempty"`
}

// LLMInferenceServiceSpec is what to serve and how to reach it.
type LLMInferenceServiceSpec struct {
	// Model is the model: where it is stored, its name, its LoRA adapters.
	// Optional in a preset.
	// +optional
	Model LLMModelSpec `json:"model"`

	// StorageInitializer turns the model download off.
	// +optional
	StorageInitializer *StorageInitializerSpec `json:"storageInitializer,omitempty"`

	// WorkloadSpec is the main workload: with prefill, the decode workload.
	WorkloadSpec `json:",inline"`

	// Router is how the service is reached: a route through a Gateway, and
	// a scheduler (the endpoint picker) in front of the model pods.
	// +optional
	Router *RouterSpec `json:"router,omitempty"`

	// Prefill adds a prefill workload for prefill/decode disaggregation:
	// the main workload then decodes, and the endpoint picker sends each
	// request's prefill to a prefill pod.
	// +optional
	Prefill *WorkloadSpec `json:"prefill,omitempty"`

	// Tracing turns distributed tracing on for every component; an empty
	// object takes the tracing preset's defaults.
	// +optional
	Tracing *TracingSpec `json:"tracing,omitempty"`

	// BaseRefs name presets merged, in order, over the well-known ones and
	// under this spec.
	// +optional
	BaseRefs []corev1.LocalObjectReference `json:"baseRefs,omitempty"`
}

// WorkloadSpec is one workload: its replicas, pods and parallelism.
type WorkloadSpec struct {
	// Replicas of the workload.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Scaling autoscales the workload between minReplicas and maxReplicas:
	// through the Workload Variant Autoscaler's desired replicas (wva, with
	// an HPA or a KEDA actuator) or KEDA's triggers (keda). Not together with
	// replicas.
	// +optional
	Scaling *ScalingSpec `json:"scaling,omitempty"`

	// Parallelism sets vLLM's tensor, pipeline, data and expert parallelism.
	// +optional
	Parallelism *ParallelismSpec `json:"parallelism,omitempty"`

	// Labels added to the workload's pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations added to the workload's pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Template is the pod template, merged over the presets' (containers by
	// name). The storage initializer's name, command and args are Serval's.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *corev1.PodSpec `json:"template,omitempty"`

	// Worker runs each replica on several nodes: a LeaderWorkerSet whose
	// leader runs Template and whose other pods run Worker, sized by
	// parallelism (data / dataLocal, or pipeline).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Worker *corev1.PodSpec `json:"worker,omitempty"`

	// KVCacheOffloading offloads the KV cache to CPU memory, then to the
	// secondary tiers, through vLLM's OffloadingConnector.
	// +optional
	KVCacheOffloading *KVCacheOffloadingSpec `json:"kvCacheOffloading,omitempty"`

	// RolloutStrategy bounds a rolling update of the workload's Deployment
	// or LeaderWorkerSet.
	// +optional
	RolloutStrategy *RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// RolloutStrategy bounds a rolling update of a workload.
type RolloutStrategy struct {
	// MaxUnavailable replicas during the update.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge replicas above the desired count during the update.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// LLMModelSpec is a model: where it is stored and what it is called.
type LLMModelSpec struct {
	// URI is where the model is stored: hf://, s3://, gs://, pvc://, oci://
	// (and the other schemes an InferenceService's storageUri takes).
	// +optional
	URI string `json:"uri,omitempty"`

	// Name is the model's name in requests ("model"); the service's name
	// when empty. Required for a LoRA adapter.
	// +optional
	Name *string `json:"name,omitempty"`

	// LoRA adapters served with the base model.
	// +optional
	LoRA *LoRASpec `json:"lora,omitempty"`

	// Confidential serves an encrypted model. Not supported by Serval yet.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Confidential *apiextensionsv1.JSON `json:"confidential,omitempty"`
}

// LoRASpec is the LoRA adapters of a model and vLLM's limits for them.
type LoRASpec struct {
	// Adapters, each a model with a name and a URI (hf://, s3://, pvc://).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Adapters []LLMModelSpec `json:"adapters,omitempty"`
	// MaxRank is vLLM's --max-lora-rank.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxRank *int32 `json:"maxRank,omitempty"`
	// MaxAdapters is vLLM's --max-loras; the number of adapters when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxAdapters *int32 `json:"maxAdapters,omitempty"`
	// MaxCpuAdapters is vLLM's --max-cpu-loras; the number of adapters when
	// unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxCpuAdapters *int32 `json:"maxCpuAdapters,omitempty"` //nolint:revive // KServe's field name
}

// StorageInitializerSpec turns the model download on or off.
type StorageInitializerSpec struct {
	// Enabled: false leaves the model to the pod template (a modelcar, an
	// init container of the user's own). Nil means true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RouterSpec is how the service is reached.
type RouterSpec struct {
	// Route is the Gateway API route: an HTTPRoute Serval makes (an empty
	// object takes the route preset), or the user's own.
	// +optional
	Route *GatewayRoutesSpec `json:"route,omitempty"`
	// Gateway names the Gateways the route attaches to; an empty object
	// means the default Gateway of serval-config.
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`
	// Ingress names the user's own Ingress, for the status URL.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`
	// Scheduler puts an InferencePool and its endpoint picker between the
	// Gateway and the model pods.
	// +optional
	Scheduler *SchedulerSpec `json:"scheduler,omitempty"`
}

// GatewayRoutesSpec is the route and the routing group it belongs to.
type GatewayRoutesSpec struct {
	// HTTP is the HTTPRoute.
	// +optional
	HTTP *HTTPRouteSpec `json:"http,omitempty"`
	// Group is the routing group: the services of one group share their
	// traffic by weight.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	Group *string `json:"group,omitempty"`
	// Weight is the service's share of its group's traffic, as a Gateway
	// API backend weight.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Weight *int32 `json:"weight,omitempty"`
}

// HTTPRouteSpec is a route Serval makes (Spec) or the user's own (Refs).
type HTTPRouteSpec struct {
	// Refs name the user's own HTTPRoutes, which Serval reads but never
	// changes.
	// +optional
	Refs []corev1.LocalObjectReference `json:"refs,omitempty"`
	// Spec is the HTTPRoute Serval makes.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *gwapiv1.HTTPRouteSpec `json:"spec,omitempty"`
}

// GatewaySpec names the Gateways a route attaches to.
type GatewaySpec struct {
	// Refs are the Gateways.
	// +optional
	Refs []GatewayObjectReference `json:"refs,omitempty"`
}

// IngressSpec names the user's own Ingresses.
type IngressSpec struct {
	// Refs are the Ingresses.
	// +optional
	Refs []UntypedObjectReference `json:"refs,omitempty"`
}

// SchedulerSpec is the endpoint picker (EPP) and its InferencePool: the
// Gateway asks the picker which model pod takes each request.
type SchedulerSpec struct {
	// Pool is the InferencePool Serval makes (Spec), or the user's own (Ref).
	// +optional
	Pool *InferencePoolSpec `json:"pool,omitempty"`
	// Labels added to the picker's pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to the picker's pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Template is the picker's pod template, merged over the preset's.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *corev1.PodSpec `json:"template,omitempty"`
	// Config is the picker's EndpointPickerConfig.
	// +optional
	Config *SchedulerConfigSpec `json:"config,omitempty"`
	// Replicas of the picker.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// Tokenizer overrides the standalone tokenizer's pod template.
	// +optional
	Tokenizer *TokenizerSpec `json:"tokenizer,omitempty"`
}

// TokenizerSpec is the standalone tokenizer's pod template.
type TokenizerSpec struct {
	// Template is merged over the tokenizer preset's.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *corev1.PodSpec `json:"template,omitempty"`
}

// SchedulerConfigSpec is an EndpointPickerConfig, inline or in a ConfigMap.
type SchedulerConfigSpec struct {
	// Inline is the EndpointPickerConfig itself.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline *runtime.RawExtension `json:"inline,omitempty"`
	// Ref is a key of a ConfigMap that holds it ("epp" when the key is
	// empty).
	// +optional
	Ref *corev1.ConfigMapKeySelector `json:"ref,omitempty"`
}

// InferencePoolSpec is the InferencePool Serval makes (Spec) or the user's
// own (Ref).
type InferencePoolSpec struct {
	// Spec is the InferencePool's spec.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *igwapi.InferencePoolSpec `json:"spec,omitempty"`
	// Ref names the user's own InferencePool.
	// +optional
	Ref *corev1.LocalObjectReference `json:"ref,omitempty"`
}

// TracingSpec is the distributed tracing configuration; unset fields take
// the tracing preset's values.
type TracingSpec struct {
	// ExporterEndpoint is OTEL_EXPORTER_OTLP_ENDPOINT.
	// +optional
	ExporterEndpoint *string `json:"exporterEndpoint,omitempty"`
	// Sampler is OTEL_TRACES_SAMPLER.
	// +optional
	Sampler *string `json:"sampler,omitempty"`
	// SamplerArg is OTEL_TRACES_SAMPLER_ARG.
	// +optional
	SamplerArg *string `json:"samplerArg,omitempty"`
	// Exporter is OTEL_TRACES_EXPORTER.
	// +optional
	Exporter *string `json:"exporter,omitempty"`
}

// ParallelismSpec is vLLM's parallelism.
type ParallelismSpec struct {
	// Tensor parallel size.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Tensor *int32 `json:"tensor,omitempty"`
	// Pipeline parallel size.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Pipeline *int32 `json:"pipeline,omitempty"`
	// Data parallel size.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Data *int32 `json:"data,omitempty"`
	// DataLocal is the data parallel size on one node.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DataLocal *int32 `json:"dataLocal,omitempty"`
	// DataRPCPort is the data parallel RPC port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	DataRPCPort *int32 `json:"dataRPCPort,omitempty"`
	// Expert turns expert parallelism on.
	// +optional
	Expert bool `json:"expert,omitempty"`
}

// UntypedObjectReference names an object by name and namespace.
type UntypedObjectReference struct {
	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the object; the service's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// GatewayObjectReference names a Gateway, and optionally one listener.
type GatewayObjectReference struct {
	UntypedObjectReference `json:",inline"`
	// SectionName is the listener; every listener that takes HTTPRoutes
	// when unset.
	// +optional
	SectionName *string `json:"sectionName,omitempty"`
}

// GetConditions returns the status conditions: every service kind has
// them, and readers of all kinds (metrics, the console) take this method.
func (s *LLMInferenceService) GetConditions() []metav1.Condition { return s.Status.Conditions }
