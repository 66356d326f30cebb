package v1alpha1

import "fmt"

// GraphLimits bound what one request through a graph may cost: the
// longest chain of nodes it passes (MaxDepth) and the most calls to
// services it makes (MaxStepCalls). Admission refuses a graph over them;
// the router enforces the same as it runs.
type GraphLimits struct {
	MaxDepth, MaxStepCalls int
}

// DefaultGraphLimits are the limits when the manager's flags set none.
var DefaultGraphLimits = GraphLimits{MaxDepth: 10, MaxStepCalls: 64}

// GraphCost is the most one request can cost in an acyclic graph whose
// references resolve: Depth, the longest chain of nodes from the root;
// StepCalls, the calls to services (InferenceServices and URLs) on its
// costliest way. A Sequence and an Ensemble run all their steps; a Switch
// and a Splitter one of them, so the dearest counts. Sums saturate, so a
// graph that fans out exponentially reports a large cost, not an overflow.
func GraphCost(spec *InferenceGraphSpec) (depth, stepCalls int) {
	type cost struct{ depth, calls int }
	memo := map[string]cost{}
	var visit func(name string) cost
	visit = func(name string) cost {
		if c, ok := memo[name]; ok {
			return c
		}
		memo[name] = cost{} // guards against a cycle, which validation reports
		r := spec.Nodes[name]
		var c cost
		for _, s := range r.Steps {
			child := cost{calls: 1}
			if _, ok := spec.Nodes[s.NodeName]; ok && s.NodeName != "" {
				child = visit(s.NodeName)
			}
			c.depth = max(c.depth, child.depth)
			switch r.RouterType {
			case Switch, Splitter:
				c.calls = max(c.calls, child.calls)
			default:
				c.calls = saturatingAdd(c.calls, child.calls)
			}
		}
		c.depth++
		memo[name] = c
		return c
	}
	c := visit(GraphRootNode)
	return c.depth, c.calls
}

func saturatingAdd(a, b int) int {
	const ceiling = 1 << 40
	return min(a+b, ceiling)
}

// ValidateGraphLimits returns a problem for each limit the graph exceeds,
// with the figures.
func ValidateGraphLimits(spec *InferenceGraphSpec, l GraphLimits) []GraphProblem {
	if _, ok := spec.Nodes[GraphRootNode]; !ok || findCycle(spec) != "" {
		return nil // ValidateGraph reports these
	}
	depth, calls := GraphCost(spec)
	var problems []GraphProblem
	if l.MaxDepth > 0 && depth > l.MaxDepth {
		problems = append(problems, GraphProblem{Path: "spec.nodes", Detail: fmt.Sprintf(
			"a request would pass a chain of %d nodes; the limit is %d (the manager's --graph-max-depth)", depth, l.MaxDepth)})
	}
	if l.MaxStepCalls > 0 && calls > l.MaxStepCalls {
		problems = append(problems, GraphProblem{Path: "spec.nodes", Detail: fmt.Sprintf(
			"a request could make %d step calls; the limit is %d (the manager's --graph-max-step-calls)", calls, l.MaxStepCalls)})
	}
	return problems
}
