package v1alpha2

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ScalingSpec autoscales a workload, KServe's shape: the Workload Variant
// Autoscaler (wva) publishes a desired replica count that an HPA or a KEDA
// ScaledObject follows, or KEDA scales on the user's own triggers (keda).
// Exactly one of wva and keda is set.
type ScalingSpec struct {
	// MinReplicas is the floor while the autoscaler is active; 1 when
	// unset. KEDA's idleReplicaCount goes below it when nothing is active.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the ceiling.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`
	// WVA follows the Workload Variant Autoscaler's wva_desired_replicas.
	// +optional
	WVA *WVASpec `json:"wva,omitempty"`
	// KEDA scales on the triggers given here, with no WVA.
	// +optional
	KEDA *DirectKEDAScalingSpec `json:"keda,omitempty"`
}

// WVASpec is the Workload Variant Autoscaler's variant: its cost and the
// actuator that applies its desired replicas.
type WVASpec struct {
	// VariantCost is the cost of one replica, a non-negative decimal
	// ("10.0" when unset, WVA's default).
	// +optional
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	VariantCost string `json:"variantCost,omitempty"`
	// ActuatorSpec is the HPA or the KEDA ScaledObject; exactly one.
	ActuatorSpec `json:",inline"`
}

// ActuatorSpec is what scales the workload to WVA's desired replicas.
type ActuatorSpec struct {
	// HPA reads wva_desired_replicas through the external metrics API (a
	// Prometheus Adapter must serve it).
	// +optional
	HPA *HPAScalingSpec `json:"hpa,omitempty"`
	// KEDA reads wva_desired_replicas from Prometheus directly, at the
	// address of serval-config's llmAutoscaling.prometheus.
	// +optional
	KEDA *KEDAScalingSpec `json:"keda,omitempty"`
}

// HPAScalingSpec is the HPA actuator's behaviour.
type HPAScalingSpec struct {
	// Behavior is the HPA's scale-up and scale-down behaviour
	// (autoscaling/v2).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// KEDAScalingSpec is what a KEDA ScaledObject takes besides its triggers.
type KEDAScalingSpec struct {
	// PollingInterval is how often, in seconds, KEDA checks the triggers.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PollingInterval *int32 `json:"pollingInterval,omitempty"`
	// CooldownPeriod is how long, in seconds, KEDA waits after the last
	// active trigger before scaling to the idle count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	CooldownPeriod *int32 `json:"cooldownPeriod,omitempty"`
	// InitialCooldownPeriod is how long, in seconds, KEDA waits after the
	// ScaledObject is made before it scales down: time to load the model.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitialCooldownPeriod *int32 `json:"initialCooldownPeriod,omitempty"`
	// IdleReplicaCount is the count when no trigger is active, below
	// minReplicas; 0 scales to zero.
	// +optional
	// +kubebuilder:validation:Minimum=0
	IdleReplicaCount *int32 `json:"idleReplicaCount,omitempty"`
	// Fallback is KEDA's fallback (failureThreshold, replicas): the count
	// kept while the metrics cannot be read.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Fallback *apiextensionsv1.JSON `json:"fallback,omitempty"`
	// Advanced is KEDA's advanced section (horizontalPodAutoscalerConfig,
	// restoreToOriginalReplicaCount, scalingModifiers).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Advanced *apiextensionsv1.JSON `json:"advanced,omitempty"`
}

// DirectKEDAScalingSpec is KEDA scaling on the user's own triggers.
type DirectKEDAScalingSpec struct {
	KEDAScalingSpec `json:",inline"`
	// Triggers are KEDA's triggers, copied into the ScaledObject; at least
	// one.
	// +listType=atomic
	Triggers []ScaleTrigger `json:"triggers"`
}

// ScaleTrigger is one KEDA trigger, KEDA's ScaleTriggers.
type ScaleTrigger struct {
	// Type is the scaler: prometheus, cpu, memory, kafka...
	Type string `json:"type"`
	// Name names the trigger.
	// +optional
	Name string `json:"name,omitempty"`
	// UseCachedMetrics reads the metric from KEDA's cache.
	// +optional
	UseCachedMetrics bool `json:"useCachedMetrics,omitempty"`
	// Metadata is the scaler's configuration.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
	// AuthenticationRef names a TriggerAuthentication (or, with kind, a
	// ClusterTriggerAuthentication).
	// +optional
	AuthenticationRef *ScaledObjectAuthRef `json:"authenticationRef,omitempty"`
	// MetricType is the target's type: AverageValue, Value or
	// Utilization.
	// +optional
	MetricType autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
}

// ScaledObjectAuthRef names a KEDA TriggerAuthentication.
type ScaledObjectAuthRef struct {
	// Name of the TriggerAuthentication.
	Name string `json:"name"`
	// Kind: TriggerAuthentication (default) or ClusterTriggerAuthentication.
	// +optional
	Kind string `json:"kind,omitempty"`
}

// KVCacheOffloadingSpec offloads the KV cache through vLLM's
// OffloadingConnector: CPU memory first, then the secondary tiers in order.
type KVCacheOffloadingSpec struct {
	// CPU is the CPU memory for the KV cache ("10Gi").
	CPU resource.Quantity `json:"cpu"`
	// EvictionPolicy of the CPU tier: lru (default) or arc.
	// +optional
	// +kubebuilder:validation:Enum=lru;arc
	EvictionPolicy string `json:"evictionPolicy,omitempty"`
	// Secondary are the tiers after CPU memory, in order.
	// +optional
	// +listType=atomic
	Secondary []SecondaryTierSpec `json:"secondary,omitempty"`
}

// SecondaryTierSpec is one secondary KV cache tier; exactly one field is
// set.
type SecondaryTierSpec struct {
	// FileSystem is a tier on a volume.
	// +optional
	FileSystem *FileSystemTierSpec `json:"fileSystem,omitempty"`
}

// FileSystemTierSpec is a KV cache tier on a volume: an emptyDir or a
// PersistentVolumeClaim; exactly one.
type FileSystemTierSpec struct {
	// EmptyDir is a node-local emptyDir of this size; the main container
	// requests the size as ephemeral storage.
	// +optional
	EmptyDir *EmptyDirTierSpec `json:"emptyDir,omitempty"`
	// PVC is a claim made per pod (spec) or the user's own (ref).
	// +optional
	PVC *PVCTierSpec `json:"pvc,omitempty"`
}

// EmptyDirTierSpec is an emptyDir KV cache tier.
type EmptyDirTierSpec struct {
	// Size is the emptyDir's sizeLimit.
	Size resource.Quantity `json:"size"`
}

// PVCTierSpec is a claim KV cache tier: an ephemeral claim per pod (spec)
// or an existing claim (ref); exactly one.
type PVCTierSpec struct {
	// Spec is the claim made for each pod, deleted with it.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *corev1.PersistentVolumeClaimSpec `json:"spec,omitempty"`
	// Ref names an existing claim.
	// +optional
	Ref *PVCRefTierSpec `json:"ref,omitempty"`
}

// PVCRefTierSpec names an existing claim and the directory in it.
type PVCRefTierSpec struct {
	// Name of the PersistentVolumeClaim.
	Name string `json:"name"`
	// Path is the directory in the claim (the mount's subPath).
	// +optional
	Path string `json:"path,omitempty"`
}
