package workload

import (
	"context"

	knconfig "knative.dev/serving/pkg/apis/config"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// Mode is a deployment mode: the objects that run a component, and how to
// read them back. Each mode is one implementation, chosen once per reconcile.
type Mode interface {
	// Name is the deployment mode.
	Name() v1beta1.DeploymentMode
	// Kinds lists every kind Objects may return; the first is the workload
	// itself (the object a frozen predictor keeps as it runs).
	Kinds() []kinds.Kind
	// Objects returns the desired objects that run c. It is pure.
	Objects(c *components.Component) ([]apply.Object, error)
	// Observe reads c's running workload.
	Observe(ctx context.Context, r client.Reader, c *components.Component) (State, error)
	// Refuse lists what in c the cluster would refuse in this mode, each
	// naming the setting that would allow it; nil when nothing.
	Refuse(c *components.Component, cluster Cluster) []string
	// ComponentStatus fills what the mode knows of a component beyond its
	// readiness (Knative's URL, revisions and traffic) into cs, the status
	// computed so far; prev is the component's status before this reconcile.
	ComponentStatus(cs *v1beta1.ComponentStatus, prev v1beta1.ComponentStatus, obs State)
}

// Cluster is what a mode needs to know of the cluster beyond the component.
type Cluster struct {
	// KnativeFeatures are Knative's feature flags in force (its defaults
	// when config-features is absent).
	KnativeFeatures *knconfig.Features
}
