package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
)

// The pod and container fields below mirror corev1.PodSpec and corev1.Container
// field for field, so KServe manifests keep working. Their large subtrees
// (containers, volumes, probes, affinity, ...) are schemaless in the CRD: the
// full PodSpec embedded three times would make the CRD megabytes large, beyond
// what client-side `kubectl apply` can store. The validating webhook decodes
// those subtrees strictly instead, and rejects unknown or mistyped fields.

// PodSpec is the pod-level part of a component: corev1.PodSpec with every field
// optional.
type PodSpec struct {
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	InitContainers []corev1.Container `json:"initContainers,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Containers []corev1.Container `json:"containers,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	EphemeralContainers []corev1.EphemeralContainer `json:"ephemeralContainers,omitempty"`
	// +optional
	RestartPolicy corev1.RestartPolicy `json:"restartPolicy,omitempty"`
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// +optional
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// +optional
	DeprecatedServiceAccount string `json:"serviceAccount,omitempty"`
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
	// +optional
	HostPID bool `json:"hostPID,omitempty"`
	// +optional
	HostIPC bool `json:"hostIPC,omitempty"`
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// +optional
	Subdomain string `json:"subdomain,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ReadinessGates []corev1.PodReadinessGate `json:"readinessGates,omitempty"`
	// +optional
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`
	// +optional
	EnableServiceLinks *bool `json:"enableServiceLinks,omitempty"`
	// +optional
	PreemptionPolicy *corev1.PreemptionPolicy `json:"preemptionPolicy,omitempty"`
	// +optional
	Overhead corev1.ResourceList `json:"overhead,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// +optional
	SetHostnameAsFQDN *bool `json:"setHostnameAsFQDN,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	OS *corev1.PodOS `json:"os,omitempty"`
	// +optional
	HostUsers *bool `json:"hostUsers,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	HostnameOverride *string `json:"hostnameOverride,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	SchedulingGroup *corev1.PodSchedulingGroup `json:"schedulingGroup,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	EvictionResponders []corev1.EvictionResponder `json:"evictionResponders,omitempty"`
}

// ToCore returns the corev1.PodSpec with the same fields. The returned value
// shares slices and maps with p; callers that modify it deep-copy first.
func (p *PodSpec) ToCore() corev1.PodSpec {
	return corev1.PodSpec{
		Volumes: p.Volumes, InitContainers: p.InitContainers, Containers: p.Containers,
		EphemeralContainers: p.EphemeralContainers, RestartPolicy: p.RestartPolicy,
		TerminationGracePeriodSeconds: p.TerminationGracePeriodSeconds,
		ActiveDeadlineSeconds:         p.ActiveDeadlineSeconds, DNSPolicy: p.DNSPolicy,
		NodeSelector: p.NodeSelector, ServiceAccountName: p.ServiceAccountName,
		DeprecatedServiceAccount:     p.DeprecatedServiceAccount,
		AutomountServiceAccountToken: p.AutomountServiceAccountToken, NodeName: p.NodeName,
		HostNetwork: p.HostNetwork, HostPID: p.HostPID, HostIPC: p.HostIPC,
		ShareProcessNamespace: p.ShareProcessNamespace, SecurityContext: p.SecurityContext,
		ImagePullSecrets: p.ImagePullSecrets, Hostname: p.Hostname, Subdomain: p.Subdomain,
		Affinity: p.Affinity, SchedulerName: p.SchedulerName, Tolerations: p.Tolerations,
		HostAliases: p.HostAliases, PriorityClassName: p.PriorityClassName, Priority: p.Priority,
		DNSConfig: p.DNSConfig, ReadinessGates: p.ReadinessGates, RuntimeClassName: p.RuntimeClassName,
		EnableServiceLinks: p.EnableServiceLinks, PreemptionPolicy: p.PreemptionPolicy,
		Overhead: p.Overhead, TopologySpreadConstraints: p.TopologySpreadConstraints,
		SetHostnameAsFQDN: p.SetHostnameAsFQDN, OS: p.OS, HostUsers: p.HostUsers,
		SchedulingGates: p.SchedulingGates, ResourceClaims: p.ResourceClaims, Resources: p.Resources,
		HostnameOverride: p.HostnameOverride, SchedulingGroup: p.SchedulingGroup,
		EvictionResponders: p.EvictionResponders,
	}
}

// Container is corev1.Container with every field optional; it is inlined into
// the model and framework specs, as in KServe.
type Container struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	Command []string `json:"command,omitempty"`
	// +optional
	Args []string `json:"args,omitempty"`
	// +optional
	WorkingDir string `json:"workingDir,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Ports []corev1.ContainerPort `json:"ports,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Env []corev1.EnvVar `json:"env,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ResizePolicy []corev1.ContainerResizePolicy `json:"resizePolicy,omitempty"`
	// +optional
	RestartPolicy *corev1.ContainerRestartPolicy `json:"restartPolicy,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	RestartPolicyRules []corev1.ContainerRestartRule `json:"restartPolicyRules,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	VolumeDevices []corev1.VolumeDevice `json:"volumeDevices,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`
	// +optional
	TerminationMessagePath string `json:"terminationMessagePath,omitempty"`
	// +optional
	TerminationMessagePolicy corev1.TerminationMessagePolicy `json:"terminationMessagePolicy,omitempty"`
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// +optional
	Stdin bool `json:"stdin,omitempty"`
	// +optional
	StdinOnce bool `json:"stdinOnce,omitempty"`
	// +optional
	TTY bool `json:"tty,omitempty"`
}

// ToCore returns the corev1.Container with the same fields, sharing slices.
func (c *Container) ToCore() corev1.Container {
	return corev1.Container{
		Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args, WorkingDir: c.WorkingDir,
		Ports: c.Ports, EnvFrom: c.EnvFrom, Env: c.Env, Resources: c.Resources,
		ResizePolicy: c.ResizePolicy, RestartPolicy: c.RestartPolicy,
		RestartPolicyRules: c.RestartPolicyRules, VolumeMounts: c.VolumeMounts,
		VolumeDevices: c.VolumeDevices, LivenessProbe: c.LivenessProbe,
		ReadinessProbe: c.ReadinessProbe, StartupProbe: c.StartupProbe, Lifecycle: c.Lifecycle,
		TerminationMessagePath: c.TerminationMessagePath, TerminationMessagePolicy: c.TerminationMessagePolicy,
		ImagePullPolicy: c.ImagePullPolicy, SecurityContext: c.SecurityContext,
		Stdin: c.Stdin, StdinOnce: c.StdinOnce, TTY: c.TTY,
	}
}
