package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InferenceService serves a model over HTTP or gRPC: a predictor, and
// optionally a transformer and an explainer in front of it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=inferenceservices,shortName=isvc,categories=serval
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="URL",type="string",JSONPath=".status.url"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type InferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec InferenceServiceSpec `json:"spec,omitempty"`
	// +optional
	Status InferenceServiceStatus `json:"status,omitempty"`

	// DecodeError is set when the stored spec does not decode (see
	// UnmarshalJSON); Spec is then empty. It is never serialized.
	DecodeError string `json:"-"`
}

// InferenceServiceList is a list of InferenceServices.
//
// +kubebuilder:object:root=true
type InferenceServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InferenceService `json:"items"`
}

// InferenceServiceSpec is the desired state of an InferenceService.
type InferenceServiceSpec struct {
	// Predictor serves the model.
	Predictor PredictorSpec `json:"predictor"`
	// Explainer explains the predictor's predictions.
	// +optional
	Explainer *ExplainerSpec `json:"explainer,omitempty"`
	// Transformer pre- and post-processes requests in front of the predictor.
	// +optional
	Transformer *TransformerSpec `json:"transformer,omitempty"`
	// Canary runs further predictors beside the stable one (Standard mode),
	// each taking its share of the predictor's traffic: a progressive
	// rollout. To promote one without restarting its pods, set
	// predictor.name to its name and remove its entry. At most MaxCanaries.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Canary []CanarySpec `json:"canary,omitempty"`
}

// CanarySpec is one canary predictor: the stable predictor with this
// entry's fields over it, run with fixed replicas.
type CanarySpec struct {
	// Predictor is what differs from the stable predictor; its name is
	// required and names its Deployment and Service
	// ({isvc}-{name}-predictor). The CRD keeps it schemaless, to stay
	// within kubectl's size for an applied object; the webhook checks its
	// fields as strictly as spec.predictor's.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Predictor PredictorSpec `json:"predictor"`
	// TrafficPercent is the share of the predictor's traffic this canary
	// takes once it is ready; 0 deploys it without traffic. The canaries'
	// shares add up to 100 at most.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	TrafficPercent int32 `json:"trafficPercent"`
}

// PredictorSpec is the predictor: a model (served by a ServingRuntime), a
// legacy framework key, or custom containers; plus the pod and scaling fields.
type PredictorSpec struct {
	// Name names this predictor variant: its Deployment and Service are
	// {isvc}-{name}-predictor instead of {isvc}-predictor. Required in a
	// canary entry.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Model is the model to serve; a ServingRuntime that supports its format
	// serves it.
	// +optional
	Model *ModelSpec `json:"model,omitempty"`

	// Legacy framework keys, kept for KServe compatibility. Defaulting turns
	// each into model.modelFormat with the key as the format name.

	// +optional
	SKLearn *PredictorExtensionSpec `json:"sklearn,omitempty"`
	// +optional
	XGBoost *PredictorExtensionSpec `json:"xgboost,omitempty"`
	// +optional
	LightGBM *PredictorExtensionSpec `json:"lightgbm,omitempty"`
	// +optional
	Tensorflow *PredictorExtensionSpec `json:"tensorflow,omitempty"`
	// +optional
	PyTorch *PredictorExtensionSpec `json:"pytorch,omitempty"`
	// +optional
	Triton *PredictorExtensionSpec `json:"triton,omitempty"`
	// +optional
	ONNX *PredictorExtensionSpec `json:"onnx,omitempty"`
	// +optional
	HuggingFace *PredictorExtensionSpec `json:"huggingface,omitempty"`
	// +optional
	PMML *PredictorExtensionSpec `json:"pmml,omitempty"`
	// +optional
	Paddle *PredictorExtensionSpec `json:"paddle,omitempty"`

	// WorkerSpec runs the predictor across nodes: a head pod and worker pods
	// (see WorkerSpec, which WorkerSpecOf decodes; schemaless in the CRD).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	WorkerSpec *apiextensionsv1.JSON `json:"workerSpec,omitempty"`

	// StorageContainerName names the ClusterStorageContainer that downloads
	// the model, instead of the first one whose formats match its URI.
	// +optional
	StorageContainerName *string `json:"storageContainerName,omitempty"`

	// StorageURIs are several models to download or mount, each at its path
	// (downloads may share one or nest, as in KServe).
	// +optional
	StorageURIs []StorageURISpec `json:"storageUris,omitempty"`

	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
}

// ModelSpec names a model, its format and where it is stored.
type ModelSpec struct {
	// ModelFormat is the model's format; runtimes are matched on it.
	ModelFormat ModelFormat `json:"modelFormat"`
	// Runtime names a ServingRuntime or ClusterServingRuntime explicitly;
	// otherwise one is selected automatically.
	// +optional
	Runtime *string `json:"runtime,omitempty"`

	PredictorExtensionSpec `json:",inline"`
}

// ModelFormat is a model format and, optionally, its version.
type ModelFormat struct {
	// Name of the format, such as sklearn, onnx or pytorch.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Version of the format; a runtime must list a matching version.
	// +optional
	Version *string `json:"version,omitempty"`
}

// PredictorExtensionSpec is the model server container of a model predictor:
// where the model is, the protocol, and container overrides.
type PredictorExtensionSpec struct {
	// StorageURI is where the model is: gs://, s3://, http(s)://, hf:// or pvc://.
	// +optional
	StorageURI *string `json:"storageUri,omitempty"`
	// RuntimeVersion replaces the tag of the runtime's image.
	// +optional
	RuntimeVersion *string `json:"runtimeVersion,omitempty"`
	// ProtocolVersion is the inference protocol; chosen with the runtime when unset.
	// +optional
	ProtocolVersion *Protocol `json:"protocolVersion,omitempty"`
	// Storage locates the model through a storage Secret key and a path.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	Container `json:",inline"`
}

// StorageURISpec is one model of spec.predictor.storageUris.
type StorageURISpec struct {
	// URI is where the model is, as in storageUri.
	URI string `json:"uri"`
	// MountPath is the absolute path where the model appears in the model
	// server's container; /mnt/models when unset, as in KServe. That it is
	// absolute is checked by the webhook, which says so in words (KServe's
	// CRD has a pattern for it).
	// +optional
	// +kubebuilder:default="/mnt/models"
	// +kubebuilder:validation:MaxLength=255
	MountPath string `json:"mountPath"`
}

// StorageSpec locates a model with a key of the storage-config Secret.
type StorageSpec struct {
	// Path of the model inside the storage.
	// +optional
	Path *string `json:"path,omitempty"`
	// SchemaPath is the path of the model's schema file.
	// +optional
	SchemaPath *string `json:"schemaPath,omitempty"`
	// Parameters override the storage Secret's parameters.
	// +optional
	Parameters *map[string]string `json:"parameters,omitempty"`
	// StorageKey is the key in the storage Secret.
	// +optional
	StorageKey *string `json:"key,omitempty"`
}

// TransformerSpec is a transformer: custom containers in front of the predictor.
type TransformerSpec struct {
	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
}

// ExplainerSpec is an explainer: custom containers next to the predictor.
type ExplainerSpec struct {
	// ART is KServe's built-in ART explainer. Not supported by Serval yet.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ART *apiextensionsv1.JSON `json:"art,omitempty"`

	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
}

// ComponentExtensionSpec holds the scaling, rollout and metadata fields that
// predictor, transformer and explainer share.
type ComponentExtensionSpec struct {
	// MinReplicas is the lower replica bound; 1 when unset, 0 scales to zero
	// where the deployment mode allows it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the upper replica bound; 0 means the mode's default.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`
	// ScaleTarget is the autoscaler's target value for ScaleMetric.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ScaleTarget *int32 `json:"scaleTarget,omitempty"`
	// ScaleMetric is what the autoscaler scales on.
	// +optional
	ScaleMetric *ScaleMetric `json:"scaleMetric,omitempty"`
	// ScaleMetricType is how ScaleTarget is read: Utilization or AverageValue.
	// +optional
	ScaleMetricType *MetricTargetType `json:"scaleMetricType,omitempty"`
	// ContainerConcurrency is the number of requests one replica takes at once
	// (Knative mode); 0 means unlimited.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ContainerConcurrency *int64 `json:"containerConcurrency,omitempty"`
	// TimeoutSeconds is the request timeout.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeout,omitempty"`
	// CanaryTrafficPercent sends this share of traffic to the latest
	// revision, the rest to the last one rolled out: Knative's revisions,
	// or in Standard mode a second Deployment (the predictor only).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	CanaryTrafficPercent *int64 `json:"canaryTrafficPercent,omitempty"`
	// Labels are added to the component's pods and objects.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to the component's pods and objects.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// DeploymentStrategy is the Deployment's rollout strategy (Standard mode only).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	DeploymentStrategy *appsv1.DeploymentStrategy `json:"deploymentStrategy,omitempty"`

	// Logger is KServe's request logger (see LoggerSpec).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Logger *apiextensionsv1.JSON `json:"logger,omitempty"`
	// Batcher is KServe's request batcher (see Batcher).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Batcher *apiextensionsv1.JSON `json:"batcher,omitempty"`
	// AutoScaling is KServe's metric-based autoscaling (see AutoScalingSpec),
	// in effect with autoscalerClass keda.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	AutoScaling *apiextensionsv1.JSON `json:"autoScaling,omitempty"`
}

// Protocol is an inference protocol.
// +kubebuilder:validation:Enum=v1;v2;grpc-v1;grpc-v2
type Protocol string

// The inference protocols, in KServe's names.
const (
	ProtocolV1     Protocol = "v1"
	ProtocolV2     Protocol = "v2"
	ProtocolGRPCV1 Protocol = "grpc-v1"
	ProtocolGRPCV2 Protocol = "grpc-v2"
)

// ScaleMetric is the metric an autoscaler scales on.
// +kubebuilder:validation:Enum=cpu;memory;concurrency;rps
type ScaleMetric string

// The scale metrics: cpu and memory for HPA, concurrency and rps for Knative's KPA.
const (
	ScaleMetricCPU         ScaleMetric = "cpu"
	ScaleMetricMemory      ScaleMetric = "memory"
	ScaleMetricConcurrency ScaleMetric = "concurrency"
	ScaleMetricRPS         ScaleMetric = "rps"
)

// MetricTargetType says how a scale target is read.
// +kubebuilder:validation:Enum=Utilization;AverageValue
type MetricTargetType string

// The metric target types.
const (
	UtilizationMetricType  MetricTargetType = "Utilization"
	AverageValueMetricType MetricTargetType = "AverageValue"
)

func init() {
	SchemeBuilder.Register(&InferenceService{}, &InferenceServiceList{})
}

// GetConditions returns the status conditions: every service kind has
// them, and readers of all kinds (metrics, the console) take this method.
func (s *InferenceService) GetConditions() []metav1.Condition { return s.Status.Conditions }
