package v1beta1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InferenceServiceStatus is the observed state of an InferenceService.
type InferenceServiceStatus struct {
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
	Address *Addressable `json:"address,omitempty"`
	// Components is the status of each component, keyed by its type.
	// +optional
	Components map[ComponentType]ComponentStatus `json:"components,omitempty"`
	// ModelStatus is the state of the predictor's model.
	// +optional
	ModelStatus ModelStatus `json:"modelStatus,omitempty"`
	// DeploymentMode is the mode the InferenceService was deployed in; it does
	// not change once set.
	// +optional
	DeploymentMode DeploymentMode `json:"deploymentMode,omitempty"`
	// ServingRuntimeName is the namespaced runtime serving the model.
	// +optional
	ServingRuntimeName string `json:"servingRuntimeName,omitempty"`
	// ClusterServingRuntimeName is the cluster runtime serving the model.
	// +optional
	ClusterServingRuntimeName string `json:"clusterServingRuntimeName,omitempty"`
	// ProtocolVersion is the protocol chosen with the runtime.
	// +optional
	ProtocolVersion Protocol `json:"protocolVersion,omitempty"`
	// CanaryStatuses are the canary predictors of spec.canary, in its order.
	// +optional
	// +listType=atomic
	CanaryStatuses []CanaryStatus `json:"canaryStatuses,omitempty"`
}

// CanaryStatus is the state of one canary predictor.
type CanaryStatus struct {
	// Name is the canary's predictor.name.
	Name string `json:"name"`
	// Ready: its Deployment has an available replica, so it takes its
	// share of the traffic.
	Ready bool `json:"ready"`
	// TrafficPercent is its share of the predictor's traffic, as the spec
	// asks; it takes it once ready.
	TrafficPercent int32 `json:"trafficPercent"`
	// ModelStatus is the state of the canary's model.
	// +optional
	ModelStatus ModelStatus `json:"modelStatus,omitempty"`
}

// Addressable is an address.
type Addressable struct {
	// URL of the address.
	// +optional
	URL string `json:"url,omitempty"`
}

// ComponentType is predictor, transformer or explainer.
// +kubebuilder:validation:Enum=predictor;transformer;explainer
type ComponentType string

// The component types.
const (
	PredictorComponent   ComponentType = "predictor"
	TransformerComponent ComponentType = "transformer"
	ExplainerComponent   ComponentType = "explainer"
)

// ComponentStatus is the observed state of one component.
type ComponentStatus struct {
	// URL of the component.
	// +optional
	URL string `json:"url,omitempty"`
	// Address is the component's cluster-local address.
	// +optional
	Address *Addressable `json:"address,omitempty"`
	// Traffic is how requests are split between revisions.
	// +optional
	Traffic []TrafficTarget `json:"traffic,omitempty"`
	// LatestReadyRevision is the latest revision that is ready.
	// +optional
	LatestReadyRevision string `json:"latestReadyRevision,omitempty"`
	// LatestCreatedRevision is the latest revision created.
	// +optional
	LatestCreatedRevision string `json:"latestCreatedRevision,omitempty"`
	// PreviousRolledoutRevision is the revision that took all traffic before
	// the latest rollout.
	// +optional
	PreviousRolledoutRevision string `json:"previousRolledoutRevision,omitempty"`
	// LatestRolledoutRevision is the latest revision that took all traffic.
	// +optional
	LatestRolledoutRevision string `json:"latestRolledoutRevision,omitempty"`
	// ModelCache is the model cache the component's model is mounted from
	// instead of downloaded. (Serval's addition.)
	// +optional
	ModelCache *ModelCacheRef `json:"modelCache,omitempty"`
}

// ModelCacheRef names the cache a model comes from and the node group
// whose copy is mounted.
type ModelCacheRef struct {
	// Kind is LocalModelCache or LocalModelNamespaceCache.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// NodeGroup is the group whose copy is mounted; "" for a namespace
	// cache on a claim (pvcRef).
	// +optional
	NodeGroup string `json:"nodeGroup,omitempty"`
}

// TrafficTarget is a share of traffic sent to a revision.
type TrafficTarget struct {
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// +optional
	LatestRevision *bool `json:"latestRevision,omitempty"`
	// +optional
	Percent *int64 `json:"percent,omitempty"`
	// +optional
	Tag string `json:"tag,omitempty"`
	// +optional
	URL string `json:"url,omitempty"`
}

// ModelStatus is the state of the predictor's model.
type ModelStatus struct {
	// TransitionStatus: UpToDate, InProgress, BlockedByFailedLoad or InvalidSpec.
	// +optional
	TransitionStatus TransitionStatus `json:"transitionStatus,omitempty"`
	// States are the active and target model states.
	// +optional
	States *ModelRevisionStates `json:"states,omitempty"`
	// LastFailureInfo says why the model last failed.
	// +optional
	LastFailureInfo *FailureInfo `json:"lastFailureInfo,omitempty"`
}

// TransitionStatus is where the model is in its rollout.
type TransitionStatus string

// The transition states, as KServe names them.
const (
	TransitionUpToDate            TransitionStatus = "UpToDate"
	TransitionInProgress          TransitionStatus = "InProgress"
	TransitionBlockedByFailedLoad TransitionStatus = "BlockedByFailedLoad"
	TransitionInvalidSpec         TransitionStatus = "InvalidSpec"
)

// ModelState is the state of a model copy.
type ModelState string

// The model states.
const (
	ModelPending      ModelState = "Pending"
	ModelStandby      ModelState = "Standby"
	ModelLoading      ModelState = "Loading"
	ModelLoaded       ModelState = "Loaded"
	ModelFailedToLoad ModelState = "FailedToLoad"
)

// ModelRevisionStates are the active and target model states.
type ModelRevisionStates struct {
	// +optional
	ActiveModelState ModelState `json:"activeModelState,omitempty"`
	// +optional
	TargetModelState ModelState `json:"targetModelState,omitempty"`
}

// FailureInfo describes a failure.
type FailureInfo struct {
	// Location is where the failure happened, such as a pod name.
	// +optional
	Location string `json:"location,omitempty"`
	// Reason is a CamelCase reason.
	// +optional
	Reason FailureReason `json:"reason,omitempty"`
	// Message is a human-readable description.
	// +optional
	Message string `json:"message,omitempty"`
	// ModelRevisionName is the revision that failed.
	// +optional
	ModelRevisionName string `json:"modelRevisionName,omitempty"`
	// Time of the failure.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// ExitCode of the failed container.
	// +optional
	ExitCode int32 `json:"exitCode,omitempty"`
}

// FailureReason is the reason in FailureInfo.
type FailureReason string

// The failure reasons.
const (
	// RuntimeNotRecognized: the named runtime does not exist.
	RuntimeNotRecognized FailureReason = "RuntimeNotRecognized"
	// RuntimeDisabled: the named runtime is disabled.
	RuntimeDisabled FailureReason = "RuntimeDisabled"
	// RuntimeUnsupportedModelFormat: the named runtime does not support the format.
	RuntimeUnsupportedModelFormat FailureReason = "RuntimeUnsupportedModelFormat"
	// RuntimeUnsupportedProtocol: the named runtime does not support the protocol.
	RuntimeUnsupportedProtocol FailureReason = "RuntimeUnsupportedProtocol"
	// RuntimeUndecodable: the named or chosen runtime's stored spec does not decode.
	RuntimeUndecodable FailureReason = "RuntimeUndecodable"
	// RuntimeMultiModel: the named runtime is a multi-model runtime.
	RuntimeMultiModel FailureReason = "RuntimeMultiModel"
	// NoSupportingRuntime: no runtime supports the format and protocol.
	NoSupportingRuntime FailureReason = "NoSupportingRuntime"
	// InvalidPredictorSpec: the predictor cannot be built as written.
	InvalidPredictorSpec FailureReason = "InvalidPredictorSpec"
	// InvalidWorkerSpecNotSet: the InferenceService sets workerSpec, its
	// runtime has none (KServe's reason).
	InvalidWorkerSpecNotSet FailureReason = "InvalidWorkerSpecNotSet"
	// UnsupportedStorageURI: the storage URI's scheme is unknown or malformed.
	UnsupportedStorageURI FailureReason = "UnsupportedStorageURI"
	// ModelLoadFailed: the storage initializer or the model server failed.
	ModelLoadFailed FailureReason = "ModelLoadFailed"
	// PodUnschedulable: the model server's pod waits for a node the
	// scheduler cannot find (capacity, selectors, a missing volume).
	PodUnschedulable FailureReason = "PodUnschedulable"
)

// DeploymentMode is how the components are run.
type DeploymentMode string

// The deployment modes and KServe's legacy names for them.
const (
	// Standard runs a Deployment, Service and HPA per component.
	Standard DeploymentMode = "Standard"
	// Knative runs a Knative Service per component.
	Knative DeploymentMode = "Knative"
	// LegacyRawDeployment is KServe's name for Standard.
	LegacyRawDeployment DeploymentMode = "RawDeployment"
	// LegacyServerless is KServe's name for Knative.
	LegacyServerless DeploymentMode = "Serverless"
)

// Condition types of an InferenceService.
const (
	// ConditionReady is True when the InferenceService serves requests at its URL.
	ConditionReady = "Ready"
	// ConditionPredictorReady is True when the predictor is available.
	ConditionPredictorReady = "PredictorReady"
	// ConditionPredictorScaledToZero is True while a predictor that scales
	// from zero runs no replica (since its LastTransitionTime); absent
	// otherwise. TransformerScaledToZero and ExplainerScaledToZero are
	// the same for those components (ScaledToZeroCondition).
	ConditionPredictorScaledToZero = "PredictorScaledToZero"
	// ConditionTransformerReady is True when the transformer is available.
	ConditionTransformerReady = "TransformerReady"
	// ConditionExplainerReady is True when the explainer is available.
	ConditionExplainerReady = "ExplainerReady"
	// ConditionCanaryPredictorReady is True when every canary predictor of
	// spec.canary has an available replica; absent without canaries. It is
	// not part of Ready, as in KServe.
	ConditionCanaryPredictorReady = "CanaryPredictorReady"
	// ConditionLatestDeploymentReady is True when the latest spec is rolled out.
	ConditionLatestDeploymentReady = "LatestDeploymentReady"
	// ConditionIngressReady is True when the route to the InferenceService is ready.
	ConditionIngressReady = "IngressReady"
	// ConditionStopped is True while the stop annotation stops the
	// InferenceService, False once it is resumed; absent on one never
	// stopped.
	ConditionStopped = "Stopped"
	// ConditionConfigValid is False while serval-config has a bad value and
	// the last good configuration is in force; absent otherwise. It is not
	// part of Ready.
	ConditionConfigValid = "ConfigValid"
)

// Condition reasons of an InferenceService. Failure reasons above are also
// used as condition reasons.
const (
	ReasonAvailable     = "Available"
	ReasonNotAvailable  = "NotAvailable"
	ReasonProgressing   = "Progressing"
	ReasonRolledOut     = "RolledOut"
	ReasonRolloutFailed = "RolloutFailed"
	ReasonInvalidSpec   = "InvalidSpec"
	// ReasonUndecodableSpec: the stored spec does not decode (a value of the
	// wrong type in a schemaless pod field); Serval leaves the children as
	// they are until it is fixed.
	ReasonUndecodableSpec  = "UndecodableSpec"
	ReasonUnsupportedField = "UnsupportedField"
	// ReasonStopped: the stop annotation stops the InferenceService.
	ReasonStopped = "Stopped"
	// ReasonNoDemand: a component that scales from zero runs no replica,
	// as no request came for its idle window.
	ReasonNoDemand = "NoDemand"
	// ReasonResumed: the stop annotation is gone and the children are back.
	ReasonResumed    = "Resumed"
	ReasonConflict   = "ConflictingObject"
	ReasonMissingCRD = "MissingCRD"
	// ReasonKnativeFeatureDisabled: Knative's config-features leaves off a
	// pod feature the component needs; the message names the key.
	ReasonKnativeFeatureDisabled = "KnativeFeatureDisabled"
	ReasonInvalidConfig          = "InvalidConfig"
	ReasonComponentsNotReady     = "ComponentsNotReady"
	ReasonAllComponentsReady     = "AllComponentsReady"
	ReasonIngressNotConfigured   = "IngressNotConfigured"
	// ReasonAllCanariesReady and ReasonCanariesNotReady are KServe's
	// CanaryPredictorReady reasons.
	ReasonAllCanariesReady = "AllCanariesReady"
	ReasonCanariesNotReady = "CanariesNotReady"
	// ReasonCanaryNotRoutable: the router cannot split traffic (the
	// Kubernetes Ingress).
	ReasonCanaryNotRoutable = "CanaryNotRoutable"
	// ReasonInvalidHost: the ingress domain template renders a host that is
	// not a valid host name for this InferenceService.
	ReasonInvalidHost = "InvalidHost"
	// ReasonApplyRejected, ReasonApplyForbidden, ReasonApplyFailed: a child
	// could not be written (see pkg/apply): refused as rendered, forbidden
	// by RBAC or an admission policy, or another error (retried).
	ReasonApplyRejected  = "ApplyRejected"
	ReasonApplyForbidden = "ApplyForbidden"
	ReasonApplyFailed    = "ApplyFailed"
)

// IngressReady reasons, one per router state.
const (
	ReasonClusterLocal             = "ClusterLocal"
	ReasonIngressCreated           = "IngressCreated"
	ReasonIngressNotCreated        = "IngressNotCreated"
	ReasonNoLoadBalancerAddress    = "NoLoadBalancerAddress"
	ReasonRoutesReady              = "RoutesReady"
	ReasonRouteNotReady            = "RouteNotReady"
	ReasonVirtualServiceCreated    = "VirtualServiceCreated"
	ReasonVirtualServiceNotCreated = "VirtualServiceNotCreated"
	ReasonKnativeRoutes            = "KnativeRoutes"
	ReasonWaitingForKnativeRoute   = "WaitingForKnativeRoute"
)

// Event reasons besides the condition reasons.
const (
	EventReady           = "Ready"
	EventNotReady        = "NotReady"
	EventRuntimeSelected = "RuntimeSelected"
	EventPruned          = "Pruned"
)

// ScaledToZeroCondition is the condition that says component t runs no
// replica while it scales from zero: PredictorScaledToZero, ...
func ScaledToZeroCondition(t ComponentType) string {
	return strings.ToUpper(string(t[:1])) + string(t[1:]) + "ScaledToZero"
}
