package pipeline

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// componentProducer runs one component in the request's mode. What it
// reads back goes into the run's Outcome (Observed, or Splits for a
// canary).
type componentProducer struct {
	req     *Request
	c       *components.Component
	present func(kinds.Kind) bool
	out     *Outcome
}

func (p componentProducer) Component() v1beta1.ComponentType { return p.c.Type }

// Render refuses the whole mode when its workload's CRD is missing (named
// on the first component: the predictor, a graph's router), then asks the
// mode whether it refuses the component, then renders it.
func (p componentProducer) Render() ([]apply.Object, *Failure, error) {
	req := p.req
	if w := req.Mode.Workload(); !p.present(w) {
		return nil, missingCRD(req.Components[0].Type, &w, fmt.Sprintf("the %s uses %s mode", req.Owner.Ref.Kind, req.Mode.Name())), nil
	}
	if r := req.Mode.Refuse(p.c, req.Cluster); r != nil {
		return nil, &Failure{Component: p.c.Type, Reason: r.Reason, Message: r.Message}, nil
	}
	objs, err := req.Mode.Objects(p.c)
	if err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", p.c.Name, err)
	}
	if req.Adjust != nil {
		req.Adjust(p.c, objs)
	}
	return objs, nil, nil
}

// Absent: an optional kind the component asks for (a KEDA ScaledObject)
// stops the run; the component cannot run as its spec says without it.
func (p componentProducer) Absent(k *kinds.Kind) *Failure {
	return missingCRD(p.c.Type, k, fmt.Sprintf("the %s needs %s", p.c.Type, withArticle(k.GVK.Kind)))
}

func (p componentProducer) Observe(ctx context.Context, r client.Reader) error {
	st, err := p.req.Mode.Observe(ctx, r, p.c)
	if err != nil {
		return err
	}
	if p.c.Split != nil {
		if p.out.Splits == nil {
			p.out.Splits = map[string]workload.State{}
		}
		p.out.Splits[p.c.Name] = st
		return nil
	}
	p.out.Observed[p.c.Type] = st
	return nil
}

// routerProducer renders the request's routes. A router whose CRD is
// missing routes nothing (Outcome.MissingRouteKind), and the workloads are
// applied all the same.
type routerProducer struct {
	req     *Request
	present func(kinds.Kind) bool
	out     *Outcome
}

func (p routerProducer) Component() v1beta1.ComponentType { return "" }

func (p routerProducer) Render() ([]apply.Object, *Failure, error) {
	req := p.req
	for _, k := range req.Router.Kinds() {
		if !p.present(k) {
			p.out.MissingRouteKind = &k
			return nil, nil, nil
		}
	}
	if r := req.Router.Refuse(req.Plan); r != nil {
		return nil, &Failure{Reason: r.Reason, Message: r.Message}, nil
	}
	objs, err := req.Router.Objects(req.Plan)
	if err != nil {
		return nil, nil, fmt.Errorf("render the %s routes: %w", req.Router.Name(), err)
	}
	p.out.Router = req.Router
	return objs, nil, nil
}

// Absent does not happen: Render checked the router's kinds.
func (p routerProducer) Absent(*kinds.Kind) *Failure { return nil }

func (p routerProducer) Observe(ctx context.Context, r client.Reader) error {
	if p.out.Router == nil {
		return nil
	}
	readiness, err := p.out.Router.Ready(ctx, r, p.req.Plan, p.out.Observed[p.req.Plan.Top.Component])
	if err != nil {
		return fmt.Errorf("read the routes: %w", err)
	}
	p.out.Routes = readiness
	return nil
}

// builtIn are the producers of a request's mode and router: one per
// component, the parked workloads, the routes.
func builtIn(req *Request, present func(kinds.Kind) bool, out *Outcome) []Producer {
	var ps []Producer
	if req.Mode != nil {
		for _, c := range req.Components {
			ps = append(ps, componentProducer{req: req, c: c, present: present, out: out})
		}
	}
	if len(req.Parked) > 0 {
		ps = append(ps, Objects("", req.Parked...))
	}
	if req.Router != nil {
		ps = append(ps, routerProducer{req: req, present: present, out: out})
	}
	return ps
}

// Freeze marks the objects of a kind as kept as they run: the Adjust of a
// component whose workload must not roll.
func Freeze(objs []apply.Object, k workload.Mode) {
	w := k.Workload()
	for i := range objs {
		if objs[i].GVK == w.GVK {
			objs[i].Frozen = true
		}
	}
}

// WorkloadHash is the apply hash of the workload object among a
// component's rendered objects (see apply.Object.Hash), or "".
func WorkloadHash(objs []apply.Object, k workload.Mode) string {
	w := k.Workload()
	for _, o := range objs {
		if o.GVK == w.GVK {
			h, _ := o.Hash()
			return h
		}
	}
	return ""
}
