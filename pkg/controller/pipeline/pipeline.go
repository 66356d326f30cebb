package pipeline

import (
	"context"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/childwatch"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Pipeline applies and observes the children of one owner kind. One
// Pipeline serves every reconcile of its controller.
type Pipeline struct {
	// Client reads children from the manager's cache, the one cache that
	// holds the children of every owner kind, and writes them.
	Client   client.Client
	Applier  *apply.Applier
	Recorder events.EventRecorder
	// Watches watches the child kinds for this owner kind's controller and
	// answers whether an optional kind's CRD exists.
	Watches *childwatch.Watches

	// kinds are the child kinds the optional-CRD gate looks objects up in.
	kinds []kinds.Kind
}

// New returns the pipeline of the owner kind ownerType (an empty object of
// it) in mgr. Start its watches once the controller is built.
func New(mgr ctrl.Manager, ownerType client.Object, applier *apply.Applier, recorder events.EventRecorder) *Pipeline {
	return &Pipeline{
		Client: mgr.GetClient(), Applier: applier, Recorder: recorder,
		Watches: childwatch.New(mgr.GetCache(), mgr.GetScheme(), mgr.GetRESTMapper(), mgr.GetAPIReader(), ownerType, childkinds.All()),
		kinds:   childkinds.All(),
	}
}

// Owner is the object whose children one run applies.
type Owner struct {
	// Object is the owner as read; Events are recorded on it.
	Object client.Object
	// Ref is its reference, which names the label its children carry.
	Ref owner.Ref
}

// Request is one run: the owner's producers. An owner kind with
// components (InferenceService, InferenceGraph) names its mode, components
// and router, and the run makes their producers first (a component's
// workload, the parked workloads, the routes); Producers follow them.
type Request struct {
	Owner      Owner
	Mode       workload.Mode
	Components []*components.Component
	Cluster    workload.Cluster
	// Adjust, when set, changes a component's rendered objects before they
	// are applied (an InferenceService's frozen predictor).
	Adjust func(c *components.Component, objs []apply.Object)
	// Plan is where the owner is reached and Router the router that routes
	// it, chosen by the owner kind; a nil Router renders no routes.
	Plan   *ingress.Plan
	Router ingress.Router
	// Parked are workloads kept, scaled to zero, though no component
	// renders them (see apply.Object.Parked).
	Parked []apply.Object
	// Producers are the owner kind's own producers (an LLM's parts and
	// picker, a cache's volumes), rendered after the built-in ones.
	Producers []Producer
}

// Failure is a problem for the user that stopped a run before anything
// was applied (a missing CRD, a refusal), or a conflicting object: status
// reports it on the component it concerns, or, with Component "", on the
// routes.
type Failure struct {
	Reason, Message string
	Component       v1beta1.ComponentType
}

// Outcome is what a run did and saw.
type Outcome struct {
	// Failure stopped the run; nothing after it happened.
	Failure *Failure
	// MissingRouteKind is a kind the router needs whose CRD is absent: the
	// workloads are applied, nothing is routed.
	MissingRouteKind *kinds.Kind
	// Router is the router whose objects were rendered, nil when none.
	Router ingress.Router
	// Objects are every desired child, and ProducedBy names the component
	// each workload object belongs to, by apply.Object.String() (routes
	// belong to none).
	Objects    []apply.Object
	ProducedBy map[string]v1beta1.ComponentType
	// ApplyFailures are the first child the API server refused, by
	// component ("" for routes); what exists is still observed.
	ApplyFailures map[v1beta1.ComponentType]apply.Failure
	// Stale: a write met a newer version (409 Conflict); the run is to be
	// retried, quietly.
	Stale bool
	// Observed is each component's workload as read after the apply; nil
	// when the run stopped before.
	Observed map[v1beta1.ComponentType]workload.State
	// Splits are the workloads of the components that split a predictor's
	// traffic (canaries), by component name.
	Splits map[string]workload.State
	// Routes is the routes' readiness, when a router rendered them.
	Routes ingress.Readiness
}

// Run renders every producer, applies what they rendered, prunes the
// owner's children no longer desired, and lets each producer read back
// what it made. A problem for the user ends up in the Outcome; only a
// transient error (an API server that could not be reached) is returned.
func (p *Pipeline) Run(ctx context.Context, req Request) (Outcome, error) {
	var out Outcome
	producers := append(builtIn(&req, p.Watches.Present, &out), req.Producers...)
	if err := produce(producers, p.kinds, p.Watches.Present, &out); err != nil || out.Failure != nil {
		return out, err
	}
	reader, err := p.apply(ctx, req.Owner, producers, &out)
	if err != nil || out.Failure != nil {
		return out, err
	}
	return out, observe(ctx, reader, producers, &out)
}
