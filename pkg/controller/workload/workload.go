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
	// Workload is the kind that runs a component: the object whose CRD
	// must exist before anything of the mode is rendered, and that a
	// frozen predictor keeps as it runs.
	Workload() kinds.Kind
	// Kinds lists every kind Objects may return, Workload among them.
	Kinds() []kinds.Kind
	// Objects returns the desired objects that run c. It is pure.
	Objects(c *components.Component) ([]apply.Object, error)
	// Observe reads c's running workload.
	Observe(ctx context.Context, r client.Reader, c *components.Component) (State, error)
	// Refuse says why the cluster would refuse c in this mode, naming the
	// setting that would allow it, with the mode's own reason; nil when
	// nothing stands in the way.
	Refuse(c *components.Component, cluster Cluster) *Refusal
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
	// KnativeFeaturesSource names where KnativeFeatures were read
	// (namespace/name of Knative's config-features), for messages.
	KnativeFeaturesSource string
}

// Refusal is a mode's or a router's reason not to render a component or a
// route: the condition reason and a message that says what to change.
type Refusal struct {
	Reason, Message string
}
