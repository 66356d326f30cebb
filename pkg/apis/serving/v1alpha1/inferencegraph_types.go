package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// InferenceGraph composes InferenceServices: a root node and named nodes,
// each a router that chains, switches, ensembles or splits requests between
// its steps. A router Deployment (or Knative Service) named after the graph
// runs it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=inferencegraphs,shortName=ig,categories=serval
// +kubebuilder:printcolumn:name="URL",type="string",JSONPath=".status.url"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type InferenceGraph struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec InferenceGraphSpec `json:"spec,omitempty"`
	// +optional
	Status InferenceGraphStatus `json:"status,omitempty"`
}

// InferenceGraphList is a list of InferenceGraphs.
//
// +kubebuilder:object:root=true
type InferenceGraphList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InferenceGraph `json:"items"`
}

// GraphRootNode is the node every request enters.
const GraphRootNode = "root"

// InferenceGraphSpec is the graph and how its router runs. The fields are
// KServe's.
type InferenceGraphSpec struct {
	// Nodes are the graph's routers by name; "root" is required.
	Nodes map[string]InferenceRouter `json:"nodes"`
	// Resources of the router container (KServe's defaults when empty).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Affinity of the router pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TimeoutSeconds bounds a whole request through the graph.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeout,omitempty"`
	// MinReplicas of the router; 0 scales to zero in Knative mode.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas of the router.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`
	// ScaleTarget is the autoscaler's target value of ScaleMetric.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ScaleTarget *int32 `json:"scaleTarget,omitempty"`
	// ScaleMetric is the metric the router scales on.
	// +optional
	ScaleMetric *v1beta1.ScaleMetric `json:"scaleMetric,omitempty"`
	// NodeSelector of the router pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// NodeName places the router pods on one node.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// Tolerations of the router pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// ImagePullSecrets of the router pods.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// RouterTimeouts are the router's server and client timeouts.
	// +optional
	RouterTimeouts *InferenceGraphRouterTimeouts `json:"routerTimeouts,omitempty"`
}

// InferenceGraphRouterTimeouts are the router's timeouts in seconds (KServe
// spells the type InfereceGraphRouterTimeouts; the fields are the same).
type InferenceGraphRouterTimeouts struct {
	// ServerRead bounds reading a whole request.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ServerRead *int64 `json:"serverRead,omitempty"`
	// ServerWrite bounds writing a whole response.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ServerWrite *int64 `json:"serverWrite,omitempty"`
	// ServerIdle bounds an idle keep-alive connection.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ServerIdle *int64 `json:"serverIdle,omitempty"`
	// ServiceClient bounds one call to one step.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ServiceClient *int64 `json:"serviceClient,omitempty"`
}

// InferenceRouterType is how a node routes a request to its steps.
// +kubebuilder:validation:Enum=Sequence;Splitter;Ensemble;Switch
type InferenceRouterType string

// The router types.
const (
	// Sequence calls the steps in order; a step gets the request or the
	// previous step's response ($request or $response).
	Sequence InferenceRouterType = "Sequence"
	// Splitter sends each request to one step, at random by weight.
	Splitter InferenceRouterType = "Splitter"
	// Ensemble calls every step at once and merges the responses by step
	// name.
	Ensemble InferenceRouterType = "Ensemble"
	// Switch calls the first step whose condition matches the request.
	Switch InferenceRouterType = "Switch"
)

// InferenceRouter is one node of the graph.
type InferenceRouter struct {
	// RouterType is how the node routes.
	RouterType InferenceRouterType `json:"routerType"`
	// Steps are the node's targets.
	// +optional
	Steps []InferenceStep `json:"steps,omitempty"`
}

// InferenceStepDependencyType says whether a failing step fails the node.
// +kubebuilder:validation:Enum=Soft;Hard
type InferenceStepDependencyType string

// The dependency types.
const (
	// Soft: the node goes on when the step fails (the default).
	Soft InferenceStepDependencyType = "Soft"
	// Hard: the node stops and answers with the step's failure.
	Hard InferenceStepDependencyType = "Hard"
)

// The values of InferenceStep.Data.
const (
	// DataRequest passes the request the node received.
	DataRequest = "$request"
	// DataResponse passes the previous step's response (Sequence).
	DataResponse = "$response"
)

// InferenceStep is one target of a node.
type InferenceStep struct {
	// StepName names the step in merged results, errors and metrics; the
	// step's index when empty.
	// +optional
	StepName string `json:"name,omitempty"`
	// InferenceTarget is where the step sends its request.
	InferenceTarget `json:",inline"`
	// Data is what the step sends: "$request" (the default) or "$response".
	// +optional
	Data string `json:"data,omitempty"`
	// Weight is the step's percentage of a Splitter's traffic.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Weight *int64 `json:"weight,omitempty"`
	// Condition is a GJSON expression: a Switch takes the first step whose
	// condition matches the request; in a Sequence, a step whose condition
	// does not match the previous response ends the sequence.
	// +optional
	Condition string `json:"condition,omitempty"`
	// Dependency is Soft (the default) or Hard.
	// +optional
	Dependency InferenceStepDependencyType `json:"dependency,omitempty"`
}

// InferenceTarget is exactly one of a node, an InferenceService or a URL.
type InferenceTarget struct {
	// NodeName is another node of the graph.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ServiceName is an InferenceService in the graph's namespace.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// ServiceURL is any HTTP endpoint.
	// +optional
	ServiceURL string `json:"serviceUrl,omitempty"`
}

// InferenceGraphStatus is the observed state of an InferenceGraph.
type InferenceGraphStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready and the conditions it is made of.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// URL is where clients send requests.
	// +optional
	URL string `json:"url,omitempty"`
	// Address is the cluster-local address.
	// +optional
	Address *v1beta1.Addressable `json:"address,omitempty"`
	// DeploymentMode is the mode the router runs in.
	// +optional
	DeploymentMode v1beta1.DeploymentMode `json:"deploymentMode,omitempty"`
}

// The InferenceGraph's conditions besides Ready.
const (
	// GraphRouterReady: the router serves.
	GraphRouterReady = "RouterReady"
	// GraphServicesReady: every InferenceService the graph names is Ready.
	GraphServicesReady = "InferenceServicesReady"
	// GraphIngressReady: the graph's route routes.
	GraphIngressReady = "IngressReady"
)

// InferenceGraphLabel labels a graph's children with the graph's name.
const InferenceGraphLabel = "serving.serval.dev/inferencegraph"

func init() {
	SchemeBuilder.Register(&InferenceGraph{}, &InferenceGraphList{})
}

// GetConditions returns the status conditions: every service kind has
// them, and readers of all kinds (metrics, the console) take this method.
func (s *InferenceGraph) GetConditions() []metav1.Condition { return s.Status.Conditions }
