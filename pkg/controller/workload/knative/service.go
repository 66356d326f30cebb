package knative

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// RBAC for the kinds below (controller-gen reads these free-standing markers).
// +kubebuilder:rbac:groups=serving.knative.dev,resources=services,verbs=get;list;watch;create;update;patch;delete

// ServiceKind is the Knative Service, built and read as Unstructured.
var ServiceKind = kinds.Kind{
	GVK:     schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"},
	CRD:     "services.serving.knative.dev",
	Install: "install Knative Serving or use Standard mode",
}

// Knative's annotations and labels.
const (
	classAnnotation    = "autoscaling.knative.dev/class"
	minScaleAnnotation = "autoscaling.knative.dev/min-scale"
	maxScaleAnnotation = "autoscaling.knative.dev/max-scale"
	metricAnnotation   = "autoscaling.knative.dev/metric"
	targetAnnotation   = "autoscaling.knative.dev/target"
	visibilityLabel    = "networking.knative.dev/visibility"
	kpaClass           = "kpa.autoscaling.knative.dev"
	hpaClass           = "hpa.autoscaling.knative.dev"
	clusterLocal       = "cluster-local"
	latestTag, prevTag = "latest", "prev"
)

// Mode is the Knative deployment mode.
type Mode struct{}

var _ workload.Mode = Mode{}

// Name implements workload.Mode.
func (Mode) Name() v1beta1.DeploymentMode { return v1beta1.Knative }

// Workload implements workload.Mode.
func (Mode) Workload() kinds.Kind { return ServiceKind }

// Kinds implements workload.Mode.
func (Mode) Kinds() []kinds.Kind { return []kinds.Kind{ServiceKind} }

// Objects implements workload.Mode.
func (Mode) Objects(c *components.Component) ([]apply.Object, error) {
	ksvc, err := MakeService(c)
	if err != nil {
		return nil, err
	}
	return []apply.Object{{GVK: ServiceKind.GVK, Key: c.Key(), Spec: client.ApplyConfigurationFromUnstructured(ksvc)}}, nil
}

// MakeService returns the Knative Service that runs c.
func MakeService(c *components.Component) (*unstructured.Unstructured, error) {
	pod := c.Pod.DeepCopy()
	pod.Containers[0].Ports = servingPort(c)
	if c.AgentPort != 0 {
		// Knative routes to the one container that declares a port: the
		// logger and batcher agent, which passes requests on to the model
		// server.
		pod.Containers[0].Ports = nil
		for i := range pod.Containers {
			if pod.Containers[i].Name == components.AgentContainerName {
				pod.Containers[i].Ports = []corev1.ContainerPort{{Name: "http1", ContainerPort: c.AgentPort}}
			}
		}
	}
	podSpec, err := toMap(pod)
	if err != nil {
		return nil, fmt.Errorf("encode the pod of %s: %w", c.Name, err)
	}
	ext := c.Extension
	if ext.ContainerConcurrency != nil {
		podSpec["containerConcurrency"] = *ext.ContainerConcurrency
	}
	if ext.TimeoutSeconds != nil {
		podSpec["timeoutSeconds"] = *ext.TimeoutSeconds
	}
	labels := workload.UnstructuredStrings(c.Labels)
	objectLabels := workload.UnstructuredStrings(c.Labels)
	if c.ClusterLocal {
		objectLabels[visibilityLabel] = clusterLocal
	}
	ksvc := map[string]any{
		"apiVersion": ServiceKind.GVK.GroupVersion().String(),
		"kind":       ServiceKind.GVK.Kind,
		"metadata": map[string]any{
			"name": c.Name, "namespace": c.Namespace(), "labels": objectLabels,
			"ownerReferences": []any{c.Owner.Unstructured()},
		},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels, "annotations": templateAnnotations(c)},
				"spec":     podSpec,
			},
			"traffic": traffic(c),
		},
	}
	return &unstructured.Unstructured{Object: ksvc}, nil
}

// servingPort is the one container port Knative allows: the serving port,
// named h2c when it is gRPC, which tells Knative to proxy HTTP/2.
func servingPort(c *components.Component) []corev1.ContainerPort {
	port := c.ServingPort()
	for _, p := range c.Ports {
		if p.ContainerPort != port {
			continue
		}
		name := p.Name
		if p.GRPC {
			name = "h2c"
		}
		return []corev1.ContainerPort{{Name: name, ContainerPort: port}}
	}
	return []corev1.ContainerPort{{ContainerPort: port}}
}

// templateAnnotations are the component's annotations plus Knative's
// autoscaling settings, which belong on the revision template.
func templateAnnotations(c *components.Component) map[string]any {
	a := workload.UnstructuredStrings(c.Annotations)
	ext := c.Extension
	class := kpaClass
	if c.AutoscalerClass == v1beta1.AutoscalerHPA {
		class = hpaClass
	}
	a[classAnnotation] = class
	minScale := int32(1)
	if ext.MinReplicas != nil {
		minScale = *ext.MinReplicas
	}
	a[minScaleAnnotation] = strconv.Itoa(int(minScale))
	if ext.MaxReplicas > 0 {
		a[maxScaleAnnotation] = strconv.Itoa(int(ext.MaxReplicas))
	}
	if ext.ScaleMetric != nil {
		a[metricAnnotation] = string(*ext.ScaleMetric)
	}
	if ext.ScaleTarget != nil {
		a[targetAnnotation] = strconv.Itoa(int(*ext.ScaleTarget))
	}
	return a
}

// traffic sends canaryTrafficPercent to the latest revision and the rest to
// the last fully rolled-out one; without a canary (or before any rollout),
// everything to the latest.
func traffic(c *components.Component) []any {
	prev := c.PreviousRolledOutRevision
	canary := c.Extension.CanaryTrafficPercent
	if canary == nil || prev == "" {
		return []any{map[string]any{"latestRevision": true, "percent": int64(100)}}
	}
	return []any{
		map[string]any{"latestRevision": true, "percent": *canary, "tag": latestTag},
		map[string]any{"latestRevision": false, "revisionName": prev, "percent": 100 - *canary, "tag": prevTag},
	}
}

// toMap converts a typed value to the map form Unstructured holds; the pod
// spec's zero values are omitted by its JSON tags.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(data, &out)
}
