package pipeline

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// render renders every component's workload objects and the routes into
// out, or the failure that stops the run: the mode's workload kind or an
// optional kind a component needs is missing, or the mode or the router
// refuses. It is pure: present says which kinds' CRDs exist.
func render(req Request, present func(kinds.Kind) bool, out *Outcome) error {
	// The workload itself first: in a mode whose CRD is missing, nothing is
	// rendered.
	if w := req.Mode.Workload(); !present(w) {
		out.Failure = missingCRD(componentOf(req), &w, fmt.Sprintf("the %s uses %s mode", req.Owner.Ref.Kind, req.Mode.Name()))
		return nil
	}
	out.ProducedBy = map[string]v1beta1.ComponentType{}
	for _, c := range req.Components {
		if r := req.Mode.Refuse(c, req.Cluster); r != nil {
			out.Failure = &Failure{Component: c.Type, Reason: r.Reason, Message: r.Message}
			return nil
		}
		objs, err := req.Mode.Objects(c)
		if err != nil {
			return fmt.Errorf("render %s: %w", c.Name, err)
		}
		if req.Adjust != nil {
			req.Adjust(c, objs)
		}
		// An optional kind the component asks for (a KEDA ScaledObject).
		if k := missing(kinds.Used(req.Mode.Kinds(), gvksOf(objs)), present); k != nil {
			out.Failure = missingCRD(c.Type, k, fmt.Sprintf("the %s needs %s", c.Type, withArticle(k.GVK.Kind)))
			return nil
		}
		for _, o := range objs {
			out.ProducedBy[o.String()] = c.Type
		}
		out.Objects = append(out.Objects, objs...)
	}
	out.Objects = append(out.Objects, req.Parked...)
	return renderRoutes(req, present, out)
}

// renderRoutes renders the router's objects. A router whose CRD is
// missing routes nothing, and the workloads are applied all the same.
func renderRoutes(req Request, present func(kinds.Kind) bool, out *Outcome) error {
	if req.Router == nil {
		return nil
	}
	if k := missing(req.Router.Kinds(), present); k != nil {
		out.MissingRouteKind = k
		return nil
	}
	if r := req.Router.Refuse(req.Plan); r != nil {
		out.Failure = &Failure{Reason: r.Reason, Message: r.Message}
		return nil
	}
	objs, err := req.Router.Objects(req.Plan)
	if err != nil {
		return fmt.Errorf("render the %s routes: %w", req.Router.Name(), err)
	}
	out.Router = req.Router
	out.Objects = append(out.Objects, objs...)
	return nil
}

// componentOf is the component a failure of the whole mode is reported
// on: the first one (the predictor, a graph's router).
func componentOf(req Request) v1beta1.ComponentType {
	if len(req.Components) == 0 {
		return ""
	}
	return req.Components[0].Type
}

// missing is the first of ks whose CRD is absent, or nil.
func missing(ks []kinds.Kind, present func(kinds.Kind) bool) *kinds.Kind {
	for i := range ks {
		if !present(ks[i]) {
			return &ks[i]
		}
	}
	return nil
}

func gvksOf(objs []apply.Object) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, len(objs))
	for i, o := range objs {
		out[i] = o.GVK
	}
	return out
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

// withArticle is a kind's name with its indefinite article: "a
// ScaledObject", "an OpenTelemetryCollector".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
