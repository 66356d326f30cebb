package knative

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	knconfig "knative.dev/serving/pkg/apis/config"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// FeaturesConfigMap is the name of Knative's feature-flag ConfigMap, in
// Knative Serving's namespace (knative-serving unless installed elsewhere).
const FeaturesConfigMap = knconfig.FeaturesConfigName

// Features are Knative's feature flags in force.
type Features = knconfig.Features

// ParseFeatures reads config-features with Knative's own parser, so the keys
// and the defaults are those of the Knative release Serval builds with; nil
// data gives Knative's defaults.
func ParseFeatures(data map[string]string) (*Features, error) {
	return knconfig.NewFeaturesConfigFromMap(data)
}

// feature is one flag of config-features and what in a pod needs it.
type feature struct {
	key  string
	flag func(*Features) knconfig.Flag
	// enabledOnly: Knative's validation wants the flag Enabled; otherwise
	// anything but Disabled (Allowed) will do.
	enabledOnly bool
	// uses returns what in the pod needs the flag, or "".
	uses func(pod *corev1.PodSpec) string
}

// features are the pod features Knative gates, in the order they are checked.
var features = []feature{
	{knconfig.FeaturePodSpecInitContainers, func(f *Features) knconfig.Flag { return f.PodSpecInitContainers }, true, initContainers},
	{knconfig.FeaturePodSpecEmptyDir, func(f *Features) knconfig.Flag { return f.PodSpecVolumesEmptyDir }, true,
		volumeOf(func(v corev1.VolumeSource) bool { return v.EmptyDir != nil }, "an emptyDir volume")},
	{knconfig.FeaturePodSpecPVClaim, func(f *Features) knconfig.Flag { return f.PodSpecPersistentVolumeClaim }, true,
		volumeOf(func(v corev1.VolumeSource) bool { return v.PersistentVolumeClaim != nil }, "a PersistentVolumeClaim volume")},
	{"kubernetes.podspec-persistent-volume-write", func(f *Features) knconfig.Flag { return f.PodSpecPersistentVolumeWrite }, true,
		volumeOf(func(v corev1.VolumeSource) bool {
			return v.PersistentVolumeClaim != nil && !v.PersistentVolumeClaim.ReadOnly
		}, "a PersistentVolumeClaim volume that is not read-only")},
	{knconfig.FeaturePodSpecHostPath, func(f *Features) knconfig.Flag { return f.PodSpecVolumesHostPath }, true,
		volumeOf(func(v corev1.VolumeSource) bool { return v.HostPath != nil }, "a hostPath volume")},
	{knconfig.FeaturePodSpecVolumesCSI, func(f *Features) knconfig.Flag { return f.PodSpecVolumesCSI }, true,
		volumeOf(func(v corev1.VolumeSource) bool { return v.CSI != nil }, "a CSI volume")},
	{knconfig.FeaturePodSpecVolumesImage, func(f *Features) knconfig.Flag { return f.PodSpecVolumesImage }, true,
		volumeOf(func(v corev1.VolumeSource) bool { return v.Image != nil }, "an image volume")},
	{"multi-container", func(f *Features) knconfig.Flag { return f.MultiContainer }, true, func(p *corev1.PodSpec) string {
		return when(len(p.Containers) > 1, fmt.Sprintf("%d containers", len(p.Containers)))
	}},
	{knconfig.FeaturePodSpecNodeSelector, func(f *Features) knconfig.Flag { return f.PodSpecNodeSelector }, false, func(p *corev1.PodSpec) string {
		return when(len(p.NodeSelector) > 0, "nodeSelector")
	}},
	{knconfig.FeaturePodSpecAffinity, func(f *Features) knconfig.Flag { return f.PodSpecAffinity }, false, func(p *corev1.PodSpec) string {
		return when(p.Affinity != nil, "affinity")
	}},
	{knconfig.FeaturePodSpecTolerations, func(f *Features) knconfig.Flag { return f.PodSpecTolerations }, false, func(p *corev1.PodSpec) string {
		return when(len(p.Tolerations) > 0, "tolerations")
	}},
	{knconfig.FeaturePodSpecTopologySpreadConstraints, func(f *Features) knconfig.Flag { return f.PodSpecTopologySpreadConstraints }, false, func(p *corev1.PodSpec) string {
		return when(len(p.TopologySpreadConstraints) > 0, "topologySpreadConstraints")
	}},
	{knconfig.FeaturePodSpecSecurityContext, func(f *Features) knconfig.Flag { return f.PodSpecSecurityContext }, false, podSecurityContext},
	{knconfig.FeaturePodSpecHostAliases, func(f *Features) knconfig.Flag { return f.PodSpecHostAliases }, false, func(p *corev1.PodSpec) string {
		return when(len(p.HostAliases) > 0, "hostAliases")
	}},
	{knconfig.FeaturePodSpecRuntimeClassName, func(f *Features) knconfig.Flag { return f.PodSpecRuntimeClassName }, false, func(p *corev1.PodSpec) string {
		return when(p.RuntimeClassName != nil, "runtimeClassName")
	}},
	{knconfig.FeaturePodSpecPriorityClassName, func(f *Features) knconfig.Flag { return f.PodSpecPriorityClassName }, false, func(p *corev1.PodSpec) string {
		return when(p.PriorityClassName != "", "priorityClassName")
	}},
	{knconfig.FeaturePodSpecSchedulerName, func(f *Features) knconfig.Flag { return f.PodSpecSchedulerName }, false, func(p *corev1.PodSpec) string {
		return when(p.SchedulerName != "", "schedulerName")
	}},
	{knconfig.FeaturePodSpecShareProcessNamespace, func(f *Features) knconfig.Flag { return f.PodSpecShareProcessNamespace }, false, func(p *corev1.PodSpec) string {
		return when(p.ShareProcessNamespace != nil, "shareProcessNamespace")
	}},
	{knconfig.FeaturePodSpecHostIPC, func(f *Features) knconfig.Flag { return f.PodSpecHostIPC }, false, func(p *corev1.PodSpec) string {
		return when(p.HostIPC, "hostIPC")
	}},
	{knconfig.FeaturePodSpecHostPID, func(f *Features) knconfig.Flag { return f.PodSpecHostPID }, false, func(p *corev1.PodSpec) string {
		return when(p.HostPID, "hostPID")
	}},
	{knconfig.FeaturePodSpecHostNetwork, func(f *Features) knconfig.Flag { return f.PodSpecHostNetwork }, false, func(p *corev1.PodSpec) string {
		return when(p.HostNetwork, "hostNetwork")
	}},
	{knconfig.FeaturePodSpecDNSPolicy, func(f *Features) knconfig.Flag { return f.PodSpecDNSPolicy }, false, func(p *corev1.PodSpec) string {
		return when(p.DNSPolicy != "", "dnsPolicy")
	}},
	{knconfig.FeaturePodSpecDNSConfig, func(f *Features) knconfig.Flag { return f.PodSpecDNSConfig }, false, func(p *corev1.PodSpec) string {
		return when(p.DNSConfig != nil, "dnsConfig")
	}},
	{knconfig.FeaturePodSpecFieldRef, func(f *Features) knconfig.Flag { return f.PodSpecFieldRef }, false, fieldRefs},
	{knconfig.FeatureContainerSpecAddCapabilities, func(f *Features) knconfig.Flag { return f.ContainerSpecAddCapabilities }, true, addedCapabilities},
}

// DisabledFeature is a feature flag a component needs that Knative leaves off.
type DisabledFeature struct {
	// Key is the config-features key to set.
	Key string
	// Value is the value that turns it on.
	Value string
	// Use is what in the component's pod needs it.
	Use string
}

// String is the message for a condition.
func (d DisabledFeature) String() string {
	return fmt.Sprintf("%s needs %s: %s", d.Use, d.Key, strings.ToLower(d.Value))
}

// DisabledFeatures returns the features c's pod needs that f leaves off,
// in the order Knative checks them: Knative would reject the Knative Service.
func DisabledFeatures(c *components.Component, f *Features) []DisabledFeature {
	var out []DisabledFeature
	for _, ft := range features {
		use := ft.uses(&c.Pod)
		if use == "" {
			continue
		}
		flag := ft.flag(f)
		if flag == knconfig.Enabled || !ft.enabledOnly && flag == knconfig.Allowed {
			continue
		}
		out = append(out, DisabledFeature{Key: ft.key, Value: string(knconfig.Enabled), Use: use})
	}
	return out
}

func when(cond bool, use string) string {
	if cond {
		return use
	}
	return ""
}

func initContainers(p *corev1.PodSpec) string {
	if len(p.InitContainers) == 0 {
		return ""
	}
	names := make([]string, len(p.InitContainers))
	for i, c := range p.InitContainers {
		names[i] = c.Name
	}
	return "init containers " + strings.Join(names, ", ")
}

func volumeOf(match func(corev1.VolumeSource) bool, what string) func(*corev1.PodSpec) string {
	return func(p *corev1.PodSpec) string {
		for _, v := range p.Volumes {
			if match(v.VolumeSource) {
				return what + " (" + v.Name + ")"
			}
		}
		return ""
	}
}

// podSecurityContext: Knative keeps a pod securityContext's seccompProfile
// without the flag; any other field needs it.
func podSecurityContext(p *corev1.PodSpec) string {
	sc := p.SecurityContext
	if sc == nil {
		return ""
	}
	rest := sc.DeepCopy()
	rest.SeccompProfile = nil
	return when(!equality.Semantic.DeepEqual(rest, &corev1.PodSecurityContext{}), "a pod securityContext")
}

func fieldRefs(p *corev1.PodSpec) string {
	for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && (e.ValueFrom.FieldRef != nil || e.ValueFrom.ResourceFieldRef != nil) {
				return "env " + e.Name + " of container " + c.Name + " (fieldRef)"
			}
		}
	}
	return ""
}

func addedCapabilities(p *corev1.PodSpec) string {
	for _, c := range append(append([]corev1.Container{}, p.InitContainers...), p.Containers...) {
		if sc := c.SecurityContext; sc != nil && sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
			return "added capabilities in container " + c.Name
		}
	}
	return ""
}

// Refuse implements workload.Mode: the pod features Knative's config-features
// leaves off that the component needs, as KnativeFeatureDisabled.
func (Mode) Refuse(c *components.Component, cluster workload.Cluster) *workload.Refusal {
	f := cluster.KnativeFeatures
	if f == nil {
		f, _ = ParseFeatures(nil) // Knative's defaults always parse
	}
	var out []string
	for _, d := range DisabledFeatures(c, f) {
		out = append(out, d.String())
	}
	if len(out) == 0 {
		return nil
	}
	return &workload.Refusal{Reason: v1beta1.ReasonKnativeFeatureDisabled, Message: fmt.Sprintf(
		"Knative would reject the %s's pod as ConfigMap %s stands: %s", c.Type, cluster.KnativeFeaturesSource, strings.Join(out, "; "))}
}
