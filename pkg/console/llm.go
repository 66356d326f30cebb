package console

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// llmDiagram draws an LLMInferenceService's path, left to right: the
// Gateways its routes attach to, the routes, the InferencePool and its
// endpoint picker (with the tokenizer beside it), and the model workloads
// (decode and prefill). Each box has its object's state; a part the
// service does not have is not drawn.
func (s *Server) llmDiagram(ctx context.Context, c client.Reader, svc *v1alpha2.LLMInferenceService, children []Child) *Diagram {
	var gateways, routes, pools, pickers, workloads []*Box
	var routeObjs []Child
	for _, ch := range children {
		b := &Box{ID: "child:" + ch.Kind + "/" + ch.Name, Kind: ch.Kind, Title: ch.Name, State: ch.State, Detail: ch.Detail}
		switch {
		case ch.Kind == "HTTPRoute":
			routes = append(routes, b)
			routeObjs = append(routeObjs, ch)
		case ch.Kind == "InferencePool":
			b.Kind = "InferencePool"
			pools = append(pools, b)
		case ch.Kind == "Deployment" && ch.Component == string(llmobjects.Scheduler):
			b.Kind = "Endpoint picker"
			pickers = append(pickers, b)
		case ch.Kind == "Deployment" && ch.Component == string(llmobjects.Tokenizer):
			b.Kind = "Tokenizer"
			pickers = append(pickers, b)
		case (ch.Kind == "Deployment" || ch.Kind == "LeaderWorkerSet") && isModelPart(ch.Component):
			b.Kind = role(ch.Component) + " · " + ch.Kind
			workloads = append(workloads, b)
		}
	}
	// The user's own pool, named by the service, is drawn as found.
	if len(pools) == 0 && svc.Spec.Router != nil && svc.Spec.Router.Scheduler != nil &&
		svc.Spec.Router.Scheduler.Pool != nil && svc.Spec.Router.Scheduler.Pool.Ref != nil {
		name := svc.Spec.Router.Scheduler.Pool.Ref.Name
		pools = append(pools, s.readBox(ctx, c, "InferencePool", svc.Namespace, name, llmobjects.InferencePoolKind.GVK))
	}
	seen := map[string]bool{}
	gatewayOf := map[string][]string{} // a route's box id: its Gateways' box ids
	for _, r := range routeObjs {
		refs, _, _ := unstructured.NestedSlice(r.obj.Object, "spec", "parentRefs")
		for _, ref := range refs {
			m, _ := ref.(map[string]any)
			name, _ := m["name"].(string)
			ns, _ := m["namespace"].(string)
			if ns == "" {
				ns = svc.Namespace
			}
			id := "gateway:" + ns + "/" + name
			gatewayOf["child:HTTPRoute/"+r.Name] = append(gatewayOf["child:HTTPRoute/"+r.Name], id)
			if seen[id] {
				continue
			}
			seen[id] = true
			b := s.readBox(ctx, c, "Gateway", ns, name, gvk("gateway.networking.k8s.io", "v1", "Gateway"))
			b.ID, b.Title = id, ns+"/"+name
			gateways = append(gateways, b)
		}
	}
	slices.SortFunc(workloads, func(a, b *Box) int { return compareBoxes(a, b) })
	var columns [][]*Box
	for _, col := range [][]*Box{gateways, routes, pools, pickers, workloads} {
		if len(col) > 0 {
			columns = append(columns, col)
		}
	}
	if len(columns) == 0 {
		return nil
	}
	d := &Diagram{}
	d.layout(columns)
	for _, r := range routes {
		for _, g := range gatewayOf[r.ID] {
			d.connect(g, r.ID, "")
		}
		next := pools
		if len(next) == 0 {
			next = workloads
		}
		for _, n := range next {
			d.connect(r.ID, n.ID, "")
		}
	}
	for _, p := range pools {
		for _, pk := range pickers {
			if pk.Kind == "Endpoint picker" {
				d.connect(p.ID, pk.ID, "")
			}
		}
	}
	for _, pk := range pickers {
		if pk.Kind != "Endpoint picker" {
			continue
		}
		for _, w := range workloads {
			d.connect(pk.ID, w.ID, "")
		}
		// The picker asks the tokenizer for a prompt's tokens.
		for _, tk := range pickers {
			if tk.Kind == "Tokenizer" {
				d.connect(pk.ID, tk.ID, "tokens")
			}
		}
	}
	return d
}

// isModelPart reports whether a component label names a model workload
// (the main one, prefill, or their workers).
func isModelPart(component string) bool {
	switch component {
	case string(llmobjects.Workload), string(llmobjects.PrefillWorkload):
		return true
	}
	return false
}

// role is how a model part is named in the drawing.
func role(component string) string {
	if component == string(llmobjects.PrefillWorkload) {
		return "Prefill"
	}
	return "Decode"
}

func compareBoxes(a, b *Box) int {
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.Title, b.Title)
}

// readBox reads an object that is not the service's child (a Gateway, the
// user's own pool) as the user, for its box: its state as childState reads
// it, or why it cannot be read.
func (s *Server) readBox(ctx context.Context, c client.Reader, kind, namespace, name string, k schema.GroupVersionKind) *Box {
	b := &Box{ID: "object:" + kind + "/" + namespace + "/" + name, Kind: kind, Title: name}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		b.State, b.Detail = "fail", "not found"
	case apierrors.IsForbidden(err):
		b.State, b.Detail = "none", "not readable"
	case err != nil:
		b.State, b.Detail = "none", "not read: "+err.Error()
	default:
		b.State, b.Detail = childState(u)
	}
	return b
}
