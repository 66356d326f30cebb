package llmobjects

import (
	"encoding/json"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	igwac "sigs.k8s.io/gateway-api-inference-extension/client-go/applyconfiguration/api/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// HasScheduler reports whether Serval runs an endpoint picker and its pool
// for the spec: a scheduler whose pool is not the user's own.
func HasScheduler(spec *v1alpha2.LLMInferenceServiceSpec) bool {
	r := spec.Router
	return r != nil && r.Scheduler != nil && !r.Scheduler.Pool.HasRef()
}

// configFlags are the endpoint picker's flags that carry its config.
var configFlags = []string{"--config-text", "-config-text", "--configText", "-configText",
	"--config-file", "-config-file", "--configFile", "-configFile"}

// SchedulerComponent is the endpoint picker as a Component: the combined
// scheduler template, its config passed as --config-text (the inline
// config, wired to the standalone tokenizer when there is one, else the
// default), or as --config-file from the ConfigMap config.ref names;
// unless the template passes one itself.
func SchedulerComponent(in Inputs) (*components.Component, error) {
	svc, s := in.Service, in.Spec.Router.Scheduler
	pod := corev1.PodSpec{}
	if s.Template != nil {
		pod = *s.Template.DeepCopy()
	}
	mainFirst(&pod)
	if len(pod.Containers) > 0 {
		main := &pod.Containers[0]
		switch {
		case slices.ContainsFunc(main.Args, func(a string) bool { return slices.Contains(configFlags, a) }):
		case s.Config != nil && s.Config.Ref != nil:
			mountConfig(&pod, s.Config.Ref)
		default:
			config := schedulerConfig(in.Spec, in.TLS)
			if c := in.Spec.Router.Scheduler.Config; c != nil && c.Inline != nil && HasTokenizer(in.Spec) {
				wired, err := wireTokenizer(config, TokenizerURL(in))
				if err != nil {
					return nil, err
				}
				config = wired
			}
			main.Args = append(main.Args, "--config-text", config)
		}
		addSchedulerTracing(in.Spec.Tracing, svc, main)
	}
	return newComponent(svc, Scheduler, SchedulerName(svc.Name), pod, commonLabels(svc, Scheduler), s.Labels, s.Annotations, s.Replicas), nil
}

// schedulerConfig is the picker's EndpointPickerConfig: the inline one, else
// the default of llm-d's baseline (KServe's): queue, KV-cache utilisation,
// prefix-cache and no-hit-LRU scorers, LoRA affinity when the model has
// adapters, and with TLS the model's metrics read over https from its
// self-signed certificate (KServe's --model-server-metrics-scheme=https,
// which llm-d's picker takes as the metrics-data-source plugin since
// v0.10).
func schedulerConfig(spec *v1alpha2.LLMInferenceServiceSpec, tls bool) string {
	if c := spec.Router.Scheduler.Config; c != nil && c.Inline != nil {
		return string(c.Inline.Raw)
	}
	lora := spec.Model.LoRA != nil && len(spec.Model.LoRA.Adapters) > 0
	if spec.Prefill != nil {
		return disaggregatedConfig(lora, tls)
	}
	text := "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n" +
		"- type: single-profile-handler\n- type: queue-scorer\n- type: kv-cache-utilization-scorer\n" +
		"- type: prefix-cache-scorer\n- type: no-hit-lru-scorer\n- type: max-score-picker\n"
	if lora {
		text += "- type: lora-affinity-scorer\n"
	}
	if tls {
		text += "- type: metrics-data-source\n  parameters:\n    scheme: https\n    insecureSkipVerify: true\n"
	}
	text += "schedulingProfiles:\n- name: default\n  plugins:\n"
	if lora {
		text += "  - pluginRef: lora-affinity-scorer\n    weight: 4\n"
	}
	return text + "  - pluginRef: queue-scorer\n    weight: 2\n  - pluginRef: kv-cache-utilization-scorer\n    weight: 2\n" +
		"  - pluginRef: prefix-cache-scorer\n    weight: 3\n  - pluginRef: no-hit-lru-scorer\n    weight: 2\n  - pluginRef: max-score-picker\n"
}

// disaggregatedConfig is the picker's config with a prefill workload,
// KServe's (llm-d's P/D baseline): every request is disaggregated; the
// prefill profile picks among the prefill pods on prefix cache, queue and
// KV-cache utilisation, the decode profile among the decode pods on active
// requests and prefix cache; LoRA affinity in both when the model has
// adapters.
func disaggregatedConfig(lora, tls bool) string {
	text := "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n" +
		"- type: disagg-headers-handler\n- type: prefill-filter\n- type: decode-filter\n- type: queue-scorer\n" +
		"- type: kv-cache-utilization-scorer\n- type: active-request-scorer\n- type: prefix-cache-scorer\n- type: max-score-picker\n" +
		"- type: always-disagg-pd-decider\n- type: disagg-profile-handler\n  parameters:\n    deciders:\n      prefill: always-disagg-pd-decider\n"
	loraRef := ""
	if lora {
		text += "- type: lora-affinity-scorer\n"
		loraRef = "  - pluginRef: lora-affinity-scorer\n    weight: 4\n"
	}
	if tls {
		text += "- type: metrics-data-source\n  parameters:\n    scheme: https\n    insecureSkipVerify: true\n"
	}
	return text + "schedulingProfiles:\n- name: prefill\n  plugins:\n  - pluginRef: prefill-filter\n" + loraRef +
		"  - pluginRef: prefix-cache-scorer\n    weight: 3\n  - pluginRef: queue-scorer\n    weight: 2\n" +
		"  - pluginRef: kv-cache-utilization-scorer\n    weight: 2\n  - pluginRef: max-score-picker\n" +
		"- name: decode\n  plugins:\n  - pluginRef: decode-filter\n" + loraRef +
		"  - pluginRef: active-request-scorer\n    weight: 2\n  - pluginRef: prefix-cache-scorer\n    weight: 3\n  - pluginRef: max-score-picker\n"
}

// The ConfigMap of config.ref is mounted here, its key as pickerConfigFile.
const (
	pickerConfigVolume = "epp-config"
	pickerConfigDir    = "/etc/serval/epp"
	pickerConfigFile   = "config.yaml"
	// DefaultSchedulerConfigKey is config.ref's key when it names none
	// (KServe's).
	DefaultSchedulerConfigKey = "epp"
)

// mountConfig has the picker read its config from the ConfigMap ref names,
// mounted into its pod: the kubelet reads the user's ConfigMap, so the
// manager needs no right to read ConfigMaps outside its own namespace.
func mountConfig(pod *corev1.PodSpec, ref *corev1.ConfigMapKeySelector) {
	key := ref.Key
	if key == "" {
		key = DefaultSchedulerConfigKey
	}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: pickerConfigVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: ref.LocalObjectReference, Items: []corev1.KeyToPath{{Key: key, Path: pickerConfigFile}}}}})
	main := &pod.Containers[0]
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: pickerConfigVolume, MountPath: pickerConfigDir, ReadOnly: true})
	main.Args = append(main.Args, "--config-file", pickerConfigDir+"/"+pickerConfigFile)
}

// pickerPorts are the picker's container ports its Service exposes.
var pickerPorts = []string{"grpc", "grpc-health", "metrics", "zmq"}

// SchedulerObjects are the picker's Deployment, Service, ServiceAccount and
// the RoleBinding of PickerClusterRole to it, and the InferencePool over
// the model pods.
func SchedulerObjects(in Inputs, c *components.Component) ([]apply.Object, error) {
	svc := in.Service
	ref := owner.OfLLM(svc).Reference()
	labels := commonLabels(svc, Scheduler)
	key := func(name string) types.NamespacedName {
		return types.NamespacedName{Namespace: svc.Namespace, Name: name}
	}
	dep, err := standard.MakeDeployment(c)
	if err != nil {
		return nil, err
	}
	objs := []apply.Object{{GVK: standard.DeploymentKind.GVK, Key: c.Key(), Spec: dep}}

	var ports []*corev1ac.ServicePortApplyConfiguration
	for _, ct := range c.Pod.Containers {
		for _, p := range ct.Ports {
			if slices.Contains(pickerPorts, p.Name) {
				protocol := p.Protocol
				if protocol == "" {
					protocol = corev1.ProtocolTCP
				}
				ports = append(ports, corev1ac.ServicePort().WithName(p.Name).WithPort(p.ContainerPort).
					WithTargetPort(intstr.FromString(p.Name)).WithProtocol(protocol))
			}
		}
	}
	sort.Slice(ports, func(i, j int) bool { return *ports[i].Name < *ports[j].Name })
	eppService := presets.EPPServiceName(svc.Name)
	objs = append(objs, apply.Object{GVK: standard.ServiceKind.GVK, Key: key(eppService), Spec: corev1ac.Service(eppService, svc.Namespace).
		WithLabels(labels).WithOwnerReferences(ref).
		WithSpec(corev1ac.ServiceSpec().WithSelector(c.Selector).WithPorts(ports...))})

	if sa := c.Pod.ServiceAccountName; sa == presets.EPPServiceAccountName(svc.Name) {
		// A ServiceAccount of the user's own is used as it is.
		objs = append(objs, apply.Object{GVK: ServiceAccountKind.GVK, Key: key(sa),
			Spec: corev1ac.ServiceAccount(sa, svc.Namespace).WithLabels(labels).WithOwnerReferences(ref)})
	}
	objs = append(objs, apply.Object{GVK: RoleBindingKind.GVK, Key: key(roleBindingName(svc.Name)),
		Spec: rbacv1ac.RoleBinding(roleBindingName(svc.Name), svc.Namespace).
			WithLabels(labels).WithOwnerReferences(ref).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(PickerClusterRole)).
			WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(c.Pod.ServiceAccountName).WithNamespace(svc.Namespace))})

	if pool := in.Spec.Router.Scheduler.Pool; pool != nil && pool.Spec != nil {
		spec := &igwac.InferencePoolSpecApplyConfiguration{}
		data, err := json.Marshal(pool.Spec)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, spec); err != nil {
			return nil, err
		}
		name := presets.InferencePoolName(svc.Name)
		objs = append(objs, apply.Object{GVK: InferencePoolKind.GVK, Key: key(name),
			Spec: igwac.InferencePool(name, svc.Namespace).WithLabels(labels).WithOwnerReferences(ref).WithSpec(spec)})
	}
	return objs, nil
}
