package ingress

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Router routes requests to an InferenceService: it declares the kinds of
// route objects it creates, renders them from a Plan (purely) and reads
// whether they route. One implementation per kind of route, chosen once per
// reconcile (see package childkinds).
type Router interface {
	// Name names the router in messages and logs.
	Name() string
	// Kinds lists every kind Objects may return.
	Kinds() []kinds.Kind
	// Refuse says why the router cannot route the plan (a split it cannot
	// weight, say), naming the router that can, with its own reason; nil
	// when it can.
	Refuse(p *Plan) *workload.Refusal
	// Objects returns the route objects of the plan.
	Objects(p *Plan) ([]apply.Object, error)
	// Ready reads the live routes: whether they route, and if not, why. top
	// is the observed workload of the component the top-level route targets.
	Ready(ctx context.Context, r client.Reader, p *Plan, top workload.State) (Readiness, error)
}

// Readiness is a route's observed state.
type Readiness struct {
	Ready   bool
	Reason  string
	Message string
	// URL and ClusterURL replace the plan's top-level addresses when the
	// router decides them (Knative's own routes, Istio's top-level hosts);
	// empty keeps the plan's.
	URL, ClusterURL string
}

// None is the router of an InferenceService that gets no route: a
// cluster-local one, or any when ingress creation is disabled. It is ready
// at once; the addresses are the cluster-local ones of the plan.
type None struct{}

// Name implements Router.
func (None) Name() string { return "none" }

// Kinds implements Router.
func (None) Kinds() []kinds.Kind { return nil }

// Refuse implements Router.
func (None) Refuse(*Plan) *workload.Refusal { return nil }

// Objects implements Router.
func (None) Objects(*Plan) ([]apply.Object, error) { return nil, nil }

// Ready implements Router.
func (None) Ready(context.Context, client.Reader, *Plan, workload.State) (Readiness, error) {
	return Readiness{Ready: true, Reason: v1beta1.ReasonClusterLocal,
		Message: "no external route: the InferenceService is cluster-local or ingress creation is disabled"}, nil
}
