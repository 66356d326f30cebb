package llmobjects

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
	"github.com/serval-dev/serval/pkg/storage"
)

// Inputs are what the children are rendered from.
type Inputs struct {
	// Service is the LLMInferenceService, for its name, namespace and UID.
	Service *v1alpha2.LLMInferenceService
	// Spec is its spec combined with its presets.
	Spec *v1alpha2.LLMInferenceServiceSpec
	// Storage is the storage initializer of serval-config, and Credentials
	// what the model's download needs.
	Storage     storage.Initializer
	Credentials storage.Credentials
	// ImageVolumes says whether the cluster mounts images as volumes.
	ImageVolumes components.ImageVolumes
	// TLS says whether the model and the picker serve TLS
	// (.GlobalConfig.EnableTLS).
	TLS bool
	// Autoscaling is where a KEDA actuator reads WVA's metric.
	Autoscaling config.LLMAutoscaling
	// Group are the members of the service's routing group that share its
	// route's traffic, itself among them, by name; nil without a group.
	Group []GroupMember
	// ModelCache is the model cache the model is on; nil for none.
	ModelCache *components.ModelCache
	// Activator is the activator's KEDA scaler (serval-config
	// activator.scalerAddress); "" when it is not installed.
	Activator string
}

// ModelPort is the port vLLM serves on in the presets.
const ModelPort int32 = 8000

// mainContainer is the container the model is mounted into.
const mainContainer = "main"

// PartWorkload is one model workload rendered: its serving pods (a
// Deployment's, or a LeaderWorkerSet's leaders') and, across nodes, its
// worker pods.
type PartWorkload struct {
	Part Part
	// Leader runs the part's template: the Deployment's pods, or the
	// LeaderWorkerSet's leaders; nil for a LeaderWorkerSet without a leader
	// template (its workers serve).
	Leader *components.Component
	// Worker runs the part's worker pods; nil for a Deployment.
	Worker *components.Component
	// Pods and WorkerPods select the part's pods, for their problems.
	Pods, WorkerPods map[string]string
}

// Serving is the component whose pods serve: the leader, else the worker.
func (w *PartWorkload) Serving() *components.Component {
	if w.Leader != nil {
		return w.Leader
	}
	return w.Worker
}

// WorkloadComponent renders a part's pods from the combined spec: the
// template (and worker) with the model mounted, vLLM's parallelism, LoRA,
// tracing and KV cache offloading arguments, the part's labels and rollout
// strategy; replicas from the part's replicas (1 when unset), unless an
// autoscaler sets them.
func WorkloadComponent(in Inputs, p Part) (*PartWorkload, error) {
	svc := in.Service
	w := &PartWorkload{Part: p, Pods: p.overridden(p.podLabels(svc))}
	if !p.hasLeader() && !p.MultiNode() {
		return nil, fmt.Errorf("the combined spec has no %s pod template with a container: is the preset %s installed?", partWord(p), presetOf(p))
	}
	if p.hasLeader() {
		c, err := partComponent(in, p, *p.Spec.Template, p.podLabels(svc), false)
		if err != nil {
			return nil, err
		}
		w.Leader = c
	}
	if p.MultiNode() {
		if len(p.Spec.Worker.Containers) == 0 {
			return nil, fmt.Errorf("the combined spec's %s worker has no container: is the preset %s installed?", partWord(p), presetOf(p))
		}
		c, err := partComponent(in, p, *p.Spec.Worker, p.workerLabels(svc), true)
		if err != nil {
			return nil, err
		}
		w.Worker, w.WorkerPods = c, p.overridden(p.workerLabels(svc))
	}
	return w, nil
}

// partComponent is one pod template of a part as a Component.
func partComponent(in Inputs, p Part, pod corev1.PodSpec, labels map[string]string, worker bool) (*components.Component, error) {
	svc := in.Service
	pod = *pod.DeepCopy()
	mainFirst(&pod)
	selector := p.overridden(p.selector(svc))
	if worker {
		// Workers behind a leader serve nothing: they carry none of the
		// serving labels the pool and the Service select.
		selector = p.overridden(maps.Clone(labels))
	}
	c := newComponent(svc, p.Component(), p.Name(svc.Name), pod, selector, p.Spec.Labels, p.Spec.Annotations, p.Spec.Replicas)
	if worker {
		c.Labels = maps.Clone(labels)
	} else {
		maps.Copy(c.Labels, labels)
	}
	// The part's own labels win over Serval's, as in KServe (the selector
	// follows them: see Part.overridden); the service's propagated ones
	// come under both.
	maps.Copy(c.Labels, p.Spec.Labels)
	prefixes := propagatedAnnotationPrefixes
	if p.MultiNode() {
		prefixes = leaderWorkerSetAnnotationPrefixes
	}
	addServiceMetadata(c.Labels, c.Annotations, svc.Labels, svc.Annotations, prefixes)
	if p.Spec.Scaling != nil {
		// The autoscaler sets the replicas; the apply step hands them over.
		c.AutoscalerClass = v1beta1.AutoscalerExternal
		c.Scale(true, p.Spec.Replicas)
	}
	if !worker && in.ScalesFromZero(p) {
		c.Activator = in.Activator
	}
	c.Extension.DeploymentStrategy = deploymentStrategy(p.Spec.RolloutStrategy)
	prepareRoutingSidecar(in, &c.Pod)
	main := &c.Pod.Containers[0]
	addParallelism(main, p.Spec.Parallelism, p.MultiNode(), worker)
	addServerTracing(in.Spec.Tracing, svc, main)
	if err := addLoRAArgs(main, in.Spec, svc.Namespace); err != nil {
		return nil, err
	}
	addKVCacheOffloading(&c.Pod, p.Spec.KVCacheOffloading)
	addManagedDRA(in, &c.Pod)
	if err := addModels(c, in); err != nil {
		return nil, err
	}
	c.Ports = portsOf(*main)
	return c, nil
}

// partWord names a part in messages.
func partWord(p Part) string {
	if p.Prefill {
		return "prefill"
	}
	return "main"
}

// presetOf is the well-known preset that brings a part's pods.
func presetOf(p Part) string {
	switch {
	case p.Prefill && p.MultiNode():
		return presets.PrefillWorkerDataParallel
	case p.Prefill:
		return presets.PrefillTemplate
	case p.MultiNode():
		return presets.WorkerDataParallel
	case p.disaggregated:
		return presets.DecodeTemplate
	}
	return presets.Template
}

// addModels mounts the model (and its LoRA adapters) into the pod, unless
// storageInitializer.enabled is false: the template brings the model then.
func addModels(c *components.Component, in Inputs) error {
	if si := in.Spec.StorageInitializer; si != nil && si.Enabled != nil && !*si.Enabled {
		return nil
	}
	spec := in.Spec
	if mc := in.ModelCache; mc != nil && mc.Source == spec.Model.URI {
		// The cached copy, on the cache's nodes.
		copied := *spec
		copied.Model.URI = mc.URI
		spec = &copied
		components.RequireNodeAffinity(&c.Pod, mc.Affinity)
	}
	if len(adapters(spec)) == 0 {
		return components.AddModel(c, spec.Model.URI, in.Storage, in.Credentials, in.ImageVolumes)
	}
	entries, err := modelEntries(spec)
	if err != nil {
		return &components.BuildError{Component: c.Type, Reason: v1beta1.UnsupportedStorageURI, Message: err.Error()}
	}
	return components.AddModels(c, entries, in.Storage, in.Credentials)
}

// DownloadServiceAccount is the ServiceAccount whose Secrets hold the
// credentials of the model's download ("default" unless the template names
// one), as KServe reads them; ok is false when nothing is downloaded: the
// storage initializer is off, or the model and its adapters are on claims
// or in OCI images.
func DownloadServiceAccount(in Inputs) (string, bool) {
	if si := in.Spec.StorageInitializer; si != nil && si.Enabled != nil && !*si.Enabled {
		return "", false
	}
	uris := []string{in.Spec.Model.URI}
	for _, a := range adapters(in.Spec) {
		uris = append(uris, a.URI)
	}
	download := slices.ContainsFunc(uris, func(u string) bool {
		return !strings.HasPrefix(u, "pvc://") && !strings.HasPrefix(u, "oci://")
	})
	if !download {
		return "", false
	}
	if in.Spec.Template != nil && in.Spec.Template.ServiceAccountName != "" {
		return in.Spec.Template.ServiceAccountName, true
	}
	return "default", true
}

// newComponent is one of the service's Deployments as a Component, in
// Standard mode with no autoscaler: its pods carry the common labels, the
// selector's and the user's labels (which win), and the user's
// annotations; replicas default to 1.
func newComponent(svc *v1alpha2.LLMInferenceService, t v1beta1.ComponentType, name string, pod corev1.PodSpec,
	selector, labels, annotations map[string]string, replicas *int32) *components.Component {
	c := &components.Component{
		PodSet: components.PodSet{Name: name, Pod: pod, Selector: selector, Labels: commonLabels(svc, t), Annotations: cloneOrEmpty(annotations)},
		Type:   t, Owner: owner.OfLLM(svc), Mode: v1beta1.Standard,
		OwnerLabel: v1alpha2.LLMInferenceServiceLabel, AutoscalerClass: v1beta1.AutoscalerNone,
	}
	maps.Copy(c.Labels, selector)
	maps.Copy(c.Labels, labels)
	c.Scale(false, replicas)
	return c
}

// mainFirst moves the container named main first: the model is mounted
// into the first container.
func mainFirst(pod *corev1.PodSpec) {
	i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == mainContainer })
	if i > 0 {
		main := pod.Containers[i]
		pod.Containers = slices.Delete(pod.Containers, i, i+1)
		pod.Containers = slices.Insert(pod.Containers, 0, main)
	}
}

func portsOf(c corev1.Container) []components.Port {
	out := make([]components.Port, 0, len(c.Ports))
	for _, p := range c.Ports {
		out = append(out, components.Port{Name: p.Name, ContainerPort: p.ContainerPort})
	}
	return out
}

// WorkloadObjects are a part's objects but its autoscaler (ScalingObjects):
// its Deployment or LeaderWorkerSet, and for the main part the Service in
// front of the model pods (it selects prefill and decode pods alike, as
// KServe's does).
func WorkloadObjects(in Inputs, w *PartWorkload) ([]apply.Object, error) {
	svc := in.Service
	var objs []apply.Object
	if w.Part.MultiNode() {
		lws, err := MakeLeaderWorkerSet(in, w)
		if err != nil {
			return nil, err
		}
		objs = append(objs, apply.Object{GVK: LeaderWorkerSetKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: w.Part.Name(svc.Name)},
			Spec: client.ApplyConfigurationFromUnstructured(lws), OmitsReplicas: w.Serving().Autoscaled})
	} else {
		dep, err := standard.MakeDeployment(w.Leader)
		if err != nil {
			return nil, err
		}
		objs = append(objs, apply.Object{GVK: standard.DeploymentKind.GVK, Key: w.Leader.Key(), Spec: dep, OmitsReplicas: w.Leader.Autoscaled})
	}
	if w.Part.Prefill {
		return objs, nil
	}
	name := presets.WorkloadServiceName(svc.Name)
	scheme := Scheme(in.TLS)
	service := corev1ac.Service(name, svc.Namespace).
		WithLabels(commonLabels(svc, Workload))
	if in.ScalesFromZero(w.Part) {
		service.WithLabels(scaleFromZeroLabels)
	}
	service.
		WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(workloadSelector(svc)).
			WithPorts(corev1ac.ServicePort().WithName(scheme).WithAppProtocol(scheme).WithPort(ModelPort).
				WithTargetPort(intstr.FromInt32(ModelPort)).WithProtocol(corev1.ProtocolTCP)))
	return append(objs, apply.Object{GVK: standard.ServiceKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: name}, Spec: service}), nil
}

// Scheme is the model's and the picker's scheme: https when they serve TLS.
func Scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}
