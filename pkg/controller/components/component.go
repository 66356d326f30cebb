package components

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/runtime"
)

// DefaultServingPort is the model server's port when its container lists none.
const DefaultServingPort int32 = 8080

// Component is one resolved part of an InferenceService.
type Component struct {
	// PodSet is the component's pods: its name (of its Deployment,
	// Service, HPA or Knative Service), selector, labels, pod and replicas.
	PodSet
	Type v1beta1.ComponentType
	// Owner is the InferenceService the component belongs to; its objects
	// live in the owner's namespace and carry its owner reference.
	Owner owner.Ref
	// ClusterLocal keeps the component off the external routes.
	ClusterLocal bool
	// PreviousRolledOutRevision is the Knative revision that last took all
	// traffic (from status), which a canary splits traffic with.
	PreviousRolledOutRevision string
	// Extension holds the scaling, timeout and rollout settings.
	Extension v1beta1.ComponentExtensionSpec
	// Mode and AutoscalerClass are in effect for the component (set the
	// latter with SetAutoscaler).
	Mode            v1beta1.DeploymentMode
	AutoscalerClass v1beta1.AutoscalerClass
	// Ports are the serving container's ports; the first serves HTTP.
	Ports []Port
	// Runtime is the chosen runtime of a model predictor; nil otherwise.
	Runtime *runtime.Selection
	// ModelCache names the cache the model is mounted from; nil when it
	// is downloaded or mounted as written.
	ModelCache *v1beta1.ModelCacheRef
	// OwnerLabel is the label of Selector that names the owner; "" means
	// the InferenceService label.
	OwnerLabel string
	// AgentPort is the port of the logger and batcher sidecar in front of
	// the model server, which then has no readiness probe of its own (the
	// agent runs it); 0 when there is none.
	AgentPort int32
	// Worker is a multi-node predictor's worker pods; nil otherwise.
	Worker *Worker
	// Split marks a predictor that takes a share of the predictor's traffic
	// beside the stable one: a canary of spec.canary, or the latest
	// revision while canaryTrafficPercent keeps the last one rolled out.
	// nil for every other component.
	Split *Split
	// Activator, when set, is the address of the activator's KEDA scaler
	// (serval-config activator.scalerAddress): the component scales from
	// zero, its requests held by the activator while it runs no ready
	// replica and its ScaledObject woken by the activator's trigger. ""
	// for every other component.
	Activator string
	// Hosts are the hosts the component's routes receive requests for, for
	// the activator (with Activator only).
	Hosts []string
}

// ScalesFromZero reports whether the activator holds the component's
// requests while it runs no ready replica (Activator is set).
func (c *Component) ScalesFromZero() bool { return c.Activator != "" }

// KEDAScalesToZero reports whether KEDA scales the component to zero:
// Standard mode, autoscalerClass keda, minReplicas 0. With the activator
// installed it then scales from zero too (Activator).
func (c *Component) KEDAScalesToZero() bool {
	return c.Mode == v1beta1.Standard && c.AutoscalerClass == v1beta1.AutoscalerKEDA &&
		c.Extension.MinReplicas != nil && *c.Extension.MinReplicas == 0
}

// Split is a predictor's share of the predictor's traffic.
type Split struct {
	// Canary is the canary's name in spec.canary; "" for the latest
	// revision of canaryTrafficPercent.
	Canary string
	// Percent is the share it takes once Ready.
	Percent int32
	// Ready: its Deployment had an available replica when the reconcile
	// began, so the routes send it its share.
	Ready bool
}

// TargetPort is where the component's Service sends requests: the agent
// when there is one, else the serving port.
func (c *Component) TargetPort() int32 {
	if c.AgentPort != 0 {
		return c.AgentPort
	}
	return c.ServingPort()
}

// OwnerKey is the value the cache's owner index (owner.Index) holds for
// the component's pods: the owner label of Selector and its value.
func (c *Component) OwnerKey() string {
	label := c.OwnerLabel
	if label == "" {
		label = v1beta1.InferenceServiceLabel
	}
	return owner.IndexKey(label, c.Selector[label])
}

// Port is a port the component serves on.
type Port struct {
	Name          string `json:"name"`
	ContainerPort int32  `json:"containerPort"`
	// GRPC marks an HTTP/2 cleartext (gRPC) port.
	GRPC bool `json:"grpc,omitempty"`
}

// ServingPort is the port the Service's port 80 forwards to.
func (c *Component) ServingPort() int32 {
	for _, p := range c.Ports {
		if !p.GRPC {
			return p.ContainerPort
		}
	}
	if len(c.Ports) > 0 {
		return c.Ports[0].ContainerPort
	}
	return DefaultServingPort
}

// Namespace is the InferenceService's namespace.
func (c *Component) Namespace() string { return c.Owner.Namespace }

// Key is the name and namespace of the component's objects.
func (c *Component) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: c.Owner.Namespace, Name: c.Name}
}

// BuildError is a component that cannot be built as specified.
type BuildError struct {
	Component v1beta1.ComponentType
	Reason    v1beta1.FailureReason
	Message   string
}

// Error is the component followed by what kept it from being built.
func (e *BuildError) Error() string {
	return string(e.Component) + ": " + e.Message
}
