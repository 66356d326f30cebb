package console

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// serviceState is the Ready state of an InferenceService a graph calls.
type serviceState struct{ state, detail string }

// serviceStates reads, as the user, the state of the InferenceServices the
// graph's steps name: one list of the namespace, however many steps there
// are. One the user may not read, or that does not exist, says so.
func serviceStates(ctx context.Context, c client.Reader, namespace string, g *v1alpha1.InferenceGraph) map[string]serviceState {
	var list v1beta1.InferenceServiceList
	err := c.List(ctx, &list, client.InNamespace(namespace))
	byName := map[string]*v1beta1.InferenceService{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	out := map[string]serviceState{}
	for _, n := range g.Spec.Nodes {
		for _, st := range n.Steps {
			name := st.ServiceName
			if name == "" {
				continue
			}
			isvc, found := byName[name]
			switch {
			case err != nil:
				out[name] = serviceState{"none", "not readable"}
			case !found:
				out[name] = serviceState{"fail", "not found"}
			default:
				cond := meta.FindStatusCondition(isvc.Status.Conditions, "Ready")
				if cond == nil {
					out[name] = serviceState{"wait", "no status yet"}
				} else {
					out[name] = serviceState{conditionState(string(cond.Status)), statusWord(cond)}
				}
			}
		}
	}
	return out
}

// graphDiagram draws a graph: its nodes in columns by their depth from
// the root (the longest path, so that every edge goes right), each with its
// steps as rows; each step's edge goes to the node or the service it
// calls, services in the column after their last caller.
func graphDiagram(g *v1alpha1.InferenceGraph, services map[string]serviceState) *Diagram {
	names := make([]string, 0, len(g.Spec.Nodes))
	for name := range g.Spec.Nodes {
		names = append(names, name)
	}
	// The root first, then by name: a stable drawing.
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == v1alpha1.GraphRootNode:
			return -1
		case b == v1alpha1.GraphRootNode:
			return 1
		}
		return strings.Compare(a, b)
	})
	depth := map[string]int{}
	for _, n := range names {
		depth[n] = 0
	}
	// Longest path from the root by relaxation; admission refuses cycles,
	// and the bound keeps a stored cycle from looping.
	for range len(names) {
		changed := false
		for _, n := range names {
			for _, st := range g.Spec.Nodes[n].Steps {
				if _, ok := g.Spec.Nodes[st.NodeName]; ok && st.NodeName != v1alpha1.GraphRootNode && depth[st.NodeName] < depth[n]+1 {
					depth[st.NodeName] = depth[n] + 1
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	var columns [][]*Box
	put := func(col int, b *Box) {
		for len(columns) <= col {
			columns = append(columns, nil)
		}
		columns[col] = append(columns[col], b)
	}
	leaves := map[string]int{} // a service's box id: its column
	var leafOrder []string
	var edges []struct{ from, to, label string }
	for _, n := range names {
		node := g.Spec.Nodes[n]
		b := &Box{ID: "node:" + n, Kind: string(node.RouterType), Title: n, State: "none", Detail: fmt.Sprintf("%d steps", len(node.Steps))}
		for i, st := range node.Steps {
			rowID := fmt.Sprintf("step:%s/%d", n, i)
			text, to := stepTarget(st)
			b.Rows = append(b.Rows, BoxRow{ID: rowID, Text: text})
			if st.NodeName != "" {
				edges = append(edges, struct{ from, to, label string }{rowID, "node:" + st.NodeName, stepLabel(node.RouterType, st)})
				continue
			}
			if _, seen := leaves[to]; !seen {
				leafOrder = append(leafOrder, to)
			}
			leaves[to] = max(leaves[to], depth[n]+1)
			edges = append(edges, struct{ from, to, label string }{rowID, to, stepLabel(node.RouterType, st)})
		}
		put(depth[n], b)
	}
	for _, id := range leafOrder {
		b := &Box{ID: id}
		if url, ok := strings.CutPrefix(id, "url:"); ok {
			b.Kind, b.Title, b.State, b.Detail = "URL", url, "none", "called directly"
		} else {
			name := strings.TrimPrefix(id, "service:")
			st := services[name]
			b.Kind, b.Title, b.State, b.Detail = "InferenceService", name, st.state, st.detail
		}
		put(leaves[id], b)
	}
	d := &Diagram{}
	d.layout(columns)
	for _, e := range edges {
		d.connect(e.from, e.to, e.label)
	}
	return d
}

// stepTarget is a step's line in its node's box and the id of the box it
// calls.
func stepTarget(st v1alpha1.InferenceStep) (text, target string) {
	switch {
	case st.NodeName != "":
		text, target = st.NodeName, "node:"+st.NodeName
	case st.ServiceName != "":
		text, target = st.ServiceName, "service:"+st.ServiceName
	default:
		text, target = st.ServiceURL, "url:"+st.ServiceURL
	}
	if st.StepName != "" {
		return st.StepName + " → " + text, target
	}
	return "→ " + text, target
}

// stepLabel is what an edge says: a Splitter's weight, a Switch's
// condition, a Hard dependency.
func stepLabel(t v1alpha1.InferenceRouterType, st v1alpha1.InferenceStep) string {
	switch {
	case t == v1alpha1.Splitter && st.Weight != nil:
		return fmt.Sprintf("%d%%", *st.Weight)
	case t == v1alpha1.Switch && st.Condition != "":
		c := st.Condition
		if len(c) > 24 {
			c = c[:23] + "…"
		}
		return c
	case st.Dependency == v1alpha1.Hard:
		return "hard"
	}
	return ""
}
