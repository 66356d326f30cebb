package children

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
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
	// Group are the members of the service's routing group that share its
	// route's traffic, itself among them, by name; nil without a group.
	Group []GroupMember
}

// ModelPort is the port vLLM serves on in the presets.
const ModelPort int32 = 8000

// mainContainer is the container the model is mounted into.
const mainContainer = "main"

// WorkloadComponent is the model workload as a Component: the pod of the
// combined template with the model mounted, run by a Deployment of
// spec.replicas (1 when unset).
func WorkloadComponent(in Inputs) (*components.Component, error) {
	svc := in.Service
	if in.Spec.Template == nil || len(in.Spec.Template.Containers) == 0 {
		return nil, fmt.Errorf("the combined spec has no pod template with a container: is the preset %s installed?", presets.Template)
	}
	pod := in.Spec.Template.DeepCopy()
	mainFirst(pod)
	c := newComponent(svc, Workload, WorkloadName(svc.Name), *pod, workloadSelector(svc), in.Spec.Labels, in.Spec.Annotations, in.Spec.Replicas)
	addParallelism(&c.Pod.Containers[0], in.Spec.Parallelism)
	addServerTracing(in.Spec.Tracing, svc, &c.Pod.Containers[0])
	if err := addLoRAArgs(&c.Pod.Containers[0], in.Spec, svc.Namespace); err != nil {
		return nil, err
	}
	if err := addModels(c, in); err != nil {
		return nil, err
	}
	c.Ports = portsOf(c.Pod.Containers[0])
	return c, nil
}

// addModels mounts the model (and its LoRA adapters) into the pod, unless
// storageInitializer.enabled is false: the template brings the model then.
func addModels(c *components.Component, in Inputs) error {
	if si := in.Spec.StorageInitializer; si != nil && si.Enabled != nil && !*si.Enabled {
		return nil
	}
	if len(adapters(in.Spec)) == 0 {
		return components.AddModel(c, in.Spec.Model.URI, in.Storage, in.Credentials, in.ImageVolumes)
	}
	entries, err := modelEntries(in.Spec)
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
		Type: t, Name: name, Owner: owner.OfLLM(svc), Mode: v1beta1.Standard,
		Pod: pod, Selector: selector, OwnerLabel: v1alpha2.LLMInferenceServiceLabel,
		AutoscalerClass: v1beta1.AutoscalerNone, Labels: commonLabels(svc, t), Annotations: maps.Clone(annotations),
	}
	maps.Copy(c.Labels, selector)
	maps.Copy(c.Labels, labels)
	c.Extension.MinReplicas = ptr.To(ptr.Deref(replicas, 1))
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

// addParallelism passes the tensor parallel size to vLLM, unless the
// container's arguments already set it.
func addParallelism(c *corev1.Container, p *v1alpha2.ParallelismSpec) {
	if p == nil || p.Tensor == nil || slices.Contains(c.Args, "--tensor-parallel-size") {
		return
	}
	c.Args = append(c.Args, "--tensor-parallel-size", strconv.Itoa(int(*p.Tensor)))
}

func portsOf(c corev1.Container) []components.Port {
	out := make([]components.Port, 0, len(c.Ports))
	for _, p := range c.Ports {
		out = append(out, components.Port{Name: p.Name, ContainerPort: p.ContainerPort})
	}
	return out
}

// WorkloadObjects are the model workload's Deployment and its Service.
func WorkloadObjects(in Inputs, c *components.Component) ([]apply.Object, error) {
	dep, err := standard.MakeDeployment(c)
	if err != nil {
		return nil, err
	}
	svc := in.Service
	name := presets.WorkloadServiceName(svc.Name)
	scheme := Scheme(in.TLS)
	service := corev1ac.Service(name, svc.Namespace).
		WithLabels(commonLabels(svc, Workload)).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(workloadSelector(svc)).
			WithPorts(corev1ac.ServicePort().WithName(scheme).WithAppProtocol(scheme).WithPort(ModelPort).
				WithTargetPort(intstr.FromInt32(ModelPort)).WithProtocol(corev1.ProtocolTCP)))
	return []apply.Object{
		{GVK: standard.DeploymentKind.GVK, Key: c.Key(), Spec: dep},
		{GVK: standard.ServiceKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: name}, Spec: service},
	}, nil
}

// Scheme is the model's and the picker's scheme: https when they serve TLS.
func Scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}
