package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// ServingRuntime is a model server, available to InferenceServices in its
// namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=servingruntimes,categories=serval
// +kubebuilder:printcolumn:name="Disabled",type="boolean",JSONPath=".spec.disabled"
// +kubebuilder:printcolumn:name="ModelType",type="string",JSONPath=".spec.supportedModelFormats[*].name"
// +kubebuilder:printcolumn:name="Containers",type="string",JSONPath=".spec.containers[*].name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ServingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ServingRuntimeSpec `json:"spec,omitempty"`
	// +optional
	Status ServingRuntimeStatus `json:"status,omitempty"`

	// DecodeError is set when the stored spec does not decode (see
	// UnmarshalJSON); Spec is then empty. It is never serialized.
	DecodeError string `json:"-"`
}

// ServingRuntimeList is a list of ServingRuntimes.
//
// +kubebuilder:object:root=true
type ServingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServingRuntime `json:"items"`
}

// ClusterServingRuntime is a model server available to InferenceServices in
// every namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusterservingruntimes,scope=Cluster,categories=serval
// +kubebuilder:printcolumn:name="Disabled",type="boolean",JSONPath=".spec.disabled"
// +kubebuilder:printcolumn:name="ModelType",type="string",JSONPath=".spec.supportedModelFormats[*].name"
// +kubebuilder:printcolumn:name="Containers",type="string",JSONPath=".spec.containers[*].name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterServingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ServingRuntimeSpec `json:"spec,omitempty"`
	// +optional
	Status ServingRuntimeStatus `json:"status,omitempty"`

	// DecodeError is set when the stored spec does not decode (see
	// UnmarshalJSON); Spec is then empty. It is never serialized.
	DecodeError string `json:"-"`
}

// ClusterServingRuntimeList is a list of ClusterServingRuntimes.
//
// +kubebuilder:object:root=true
type ClusterServingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterServingRuntime `json:"items"`
}

// ServingRuntimeSpec describes a model server: the formats and protocols it
// serves, and its pod.
type ServingRuntimeSpec struct {
	// SupportedModelFormats are the model formats this runtime serves.
	// +optional
	SupportedModelFormats []SupportedModelFormat `json:"supportedModelFormats,omitempty"`
	// MultiModel marks a ModelMesh multi-model runtime; Serval never selects one.
	// +optional
	MultiModel *bool `json:"multiModel,omitempty"`
	// Disabled takes the runtime out of selection.
	// +optional
	Disabled *bool `json:"disabled,omitempty"`
	// ProtocolVersions are the inference protocols the runtime speaks.
	// +optional
	ProtocolVersions []v1beta1.Protocol `json:"protocolVersions,omitempty"`

	ServingRuntimePodSpec `json:",inline"`

	// ModelMesh fields, kept for compatibility. Not supported by Serval yet.

	// +optional
	GrpcMultiModelManagementEndpoint *string `json:"grpcEndpoint,omitempty"`
	// +optional
	GrpcDataEndpoint *string `json:"grpcDataEndpoint,omitempty"`
	// +optional
	HTTPDataEndpoint *string `json:"httpDataEndpoint,omitempty"`
	// +optional
	Replicas *uint16 `json:"replicas,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	StorageHelper *apiextensionsv1.JSON `json:"storageHelper,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	BuiltInAdapter *apiextensionsv1.JSON `json:"builtInAdapter,omitempty"`
	// WorkerSpec is the worker pods of multi-node predictors (see WorkerSpec,
	// which WorkerSpecOf decodes; schemaless in the CRD).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	WorkerSpec *apiextensionsv1.JSON `json:"workerSpec,omitempty"`
}

// SupportedModelFormat is a model format a runtime serves.
type SupportedModelFormat struct {
	// Name of the format.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Version of the format; matches an InferenceService's modelFormat.version
	// on its major version ("1" matches "1.2").
	// +optional
	Version *string `json:"version,omitempty"`
	// AutoSelect lets the runtime be chosen for InferenceServices that do not
	// name a runtime.
	// +optional
	AutoSelect *bool `json:"autoSelect,omitempty"`
	// Priority orders auto-selected runtimes; higher first.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Priority *int32 `json:"priority,omitempty"`
}

// ServingRuntimePodSpec is the runtime's pod: containers (the first one is the
// model server) and pod-level fields merged into each InferenceService's pod.
type ServingRuntimePodSpec struct {
	// Containers of the runtime; the first is the model server.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Containers []corev1.Container `json:"containers"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Labels are added to the pods of InferenceServices using the runtime.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the pods of InferenceServices using the runtime.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// +optional
	HostIPC bool `json:"hostIPC,omitempty"`
}

// ServingRuntimeStatus is empty; runtimes have no observed state yet.
type ServingRuntimeStatus struct{}

// IsDisabled reports whether the runtime is disabled.
func (s *ServingRuntimeSpec) IsDisabled() bool { return s.Disabled != nil && *s.Disabled }

// IsMultiModel reports whether the runtime is a multi-model runtime.
func (s *ServingRuntimeSpec) IsMultiModel() bool { return s.MultiModel != nil && *s.MultiModel }

func init() {
	SchemeBuilder.Register(&ServingRuntime{}, &ServingRuntimeList{}, &ClusterServingRuntime{}, &ClusterServingRuntimeList{})
}
