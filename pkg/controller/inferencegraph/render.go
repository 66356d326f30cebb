package inferencegraph

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// RouterComponent is the component type of a graph's router, on its
// objects' component label.
const RouterComponent v1beta1.ComponentType = "router"

// The router container's ports.
const (
	RouterPort  int32 = 8080
	MetricsPort int32 = 9090
)

// RouterBinary is the router's path in Serval's image.
const RouterBinary = "/router"

// Inputs are the resolved facts a graph's router is rendered from.
type Inputs struct {
	Graph *v1alpha1.InferenceGraph
	Mode  v1beta1.DeploymentMode
	// URLs are the endpoints of the InferenceServices the graph names.
	URLs map[string]string
	// Router is the router configuration; DefaultImage the image when it
	// names none (the manager's own).
	Router       config.Router
	DefaultImage string
	// Limits bound the graph's depth and step calls per request.
	Limits v1alpha1.GraphLimits
}

// OwnerOf is the owner reference of a graph's children.
func OwnerOf(ig *v1alpha1.InferenceGraph) owner.Ref {
	return owner.Ref{APIVersion: v1alpha1.GroupVersion.String(), Kind: "InferenceGraph", Name: ig.Name, Namespace: ig.Namespace, UID: ig.UID}
}

// RoutedGraph is the graph as the router gets it: the nodes with every
// InferenceService replaced by its URL, the timeouts; nothing else.
func RoutedGraph(spec *v1alpha1.InferenceGraphSpec, urls map[string]string) ([]byte, error) {
	// The fields of InferenceGraphSpec the router reads, with their names.
	routed := struct {
		Nodes          map[string]v1alpha1.InferenceRouter    `json:"nodes"`
		TimeoutSeconds *int64                                 `json:"timeout,omitempty"`
		RouterTimeouts *v1alpha1.InferenceGraphRouterTimeouts `json:"routerTimeouts,omitempty"`
	}{Nodes: map[string]v1alpha1.InferenceRouter{}, TimeoutSeconds: spec.TimeoutSeconds, RouterTimeouts: spec.RouterTimeouts}
	for name, n := range spec.Nodes {
		steps := make([]v1alpha1.InferenceStep, len(n.Steps))
		for i, s := range n.Steps {
			if s.ServiceName != "" {
				u, ok := urls[s.ServiceName]
				if !ok {
					return nil, fmt.Errorf("InferenceService %s has no URL yet", s.ServiceName)
				}
				s.ServiceURL, s.ServiceName = u, ""
			}
			steps[i] = s
		}
		routed.Nodes[name] = v1alpha1.InferenceRouter{RouterType: n.RouterType, Steps: steps}
	}
	return json.Marshal(routed) // maps encode with sorted keys: the same graph, the same bytes
}

// MaxGraphArgBytes bounds the graph the router gets, its InferenceServices
// resolved to URLs: Linux refuses to start a process with an argument of
// 128 KiB or more (MAX_ARG_STRLEN, with the flag's name and the NUL).
const MaxGraphArgBytes = 128<<10 - len("--graph-json=") - 1

// GraphTooLargeError is a graph whose resolved form is past
// MaxGraphArgBytes: its router could not start.
type GraphTooLargeError struct{ Bytes int }

func (e *GraphTooLargeError) Error() string {
	return fmt.Sprintf("the graph, its InferenceServices resolved to URLs, is %d bytes; the router receives it as one command-line argument, which Linux caps at %d bytes: make the graph smaller",
		e.Bytes, MaxGraphArgBytes)
}

// Build returns the router's component: its pod, scaling and metadata. It
// is pure.
func Build(in Inputs) (*components.Component, error) {
	ig := in.Graph
	graphJSON, err := RoutedGraph(&ig.Spec, in.URLs)
	if err != nil {
		return nil, err
	}
	if len(graphJSON) > MaxGraphArgBytes {
		return nil, &GraphTooLargeError{Bytes: len(graphJSON)}
	}
	image := in.Router.Image
	if image == "" {
		image = in.DefaultImage
	}
	args := append([]string{"--graph-json=" + string(graphJSON), fmt.Sprintf("--addr=:%d", RouterPort), fmt.Sprintf("--metrics-addr=:%d", MetricsPort)},
		routerArgs(in.Router, in.Limits)...)
	resources := in.Router.Resources
	if len(ig.Spec.Resources.Requests) > 0 || len(ig.Spec.Resources.Limits) > 0 {
		resources = ig.Spec.Resources
	}
	container := corev1.Container{
		Name: "router", Image: image, Command: []string{RouterBinary}, Args: args,
		Ports:     []corev1.ContainerPort{{Name: "http1", ContainerPort: RouterPort, Protocol: corev1.ProtocolTCP}},
		Resources: resources,
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/readyz", Port: intstr.FromInt32(RouterPort)}}, PeriodSeconds: 5},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	selector := map[string]string{v1alpha1.InferenceGraphLabel: ig.Name}
	labels := maps.Clone(ig.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, selector)
	labels[v1beta1.ComponentLabel] = string(RouterComponent)
	annotations := map[string]string{}
	components.PropagatedAnnotations(annotations, ig.Annotations)
	// The router serves its metrics on a port of its own.
	annotations["prometheus.io/scrape"] = "true"
	annotations["prometheus.io/port"] = fmt.Sprint(MetricsPort)
	annotations["prometheus.io/path"] = "/metrics"
	mode := in.Mode
	class := v1beta1.AutoscalerClass(strings.ToLower(ig.Annotations[v1beta1.AutoscalerClassAnnotation]))
	if class == "" {
		class = v1beta1.AutoscalerHPA
		if mode == v1beta1.Knative {
			class = v1beta1.AutoscalerKPA
		}
	}
	c := &components.Component{
		PodSet: components.PodSet{Name: ig.Name, Selector: selector, Labels: labels, Annotations: annotations,
			Pod: corev1.PodSpec{
				Containers: []corev1.Container{container}, Affinity: ig.Spec.Affinity, NodeSelector: ig.Spec.NodeSelector,
				NodeName: ig.Spec.NodeName, Tolerations: ig.Spec.Tolerations, ImagePullSecrets: ig.Spec.ImagePullSecrets,
			}},
		Type: RouterComponent, Owner: OwnerOf(ig),
		ClusterLocal: ig.Labels[v1beta1.VisibilityLabel] == v1beta1.VisibilityClusterLocal,
		OwnerLabel:   v1alpha1.InferenceGraphLabel,
		Extension: v1beta1.ComponentExtensionSpec{MinReplicas: ig.Spec.MinReplicas, MaxReplicas: ig.Spec.MaxReplicas,
			ScaleTarget: ig.Spec.ScaleTarget, ScaleMetric: ig.Spec.ScaleMetric, TimeoutSeconds: ig.Spec.TimeoutSeconds},
		Mode:  mode,
		Ports: []components.Port{{Name: "http1", ContainerPort: RouterPort}},
	}
	c.SetAutoscaler(class)
	return c, nil
}
