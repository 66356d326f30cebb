package v1alpha1

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGraphCost(t *testing.T) {
	svc := func(name string) InferenceStep {
		return InferenceStep{InferenceTarget: InferenceTarget{ServiceName: name}}
	}
	node := func(name string) InferenceStep {
		return InferenceStep{InferenceTarget: InferenceTarget{NodeName: name}}
	}
	// chain: n Sequence nodes, each calling the next k times.
	chain := func(n, k int) *InferenceGraphSpec {
		spec := &InferenceGraphSpec{Nodes: map[string]InferenceRouter{}}
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			if i == 0 {
				name = GraphRootNode
			}
			next := node(fmt.Sprintf("n%d", i+1))
			if i == n-1 {
				next = svc("m")
			}
			var steps []InferenceStep
			for range k {
				steps = append(steps, next)
			}
			spec.Nodes[name] = InferenceRouter{RouterType: Sequence, Steps: steps}
		}
		return spec
	}
	tests := []struct {
		name             string
		spec             *InferenceGraphSpec
		depth, stepCalls int
	}{
		{"one service", &InferenceGraphSpec{Nodes: map[string]InferenceRouter{"root": {RouterType: Sequence, Steps: []InferenceStep{svc("a")}}}}, 1, 1},
		{"an Ensemble runs every step", &InferenceGraphSpec{Nodes: map[string]InferenceRouter{"root": {RouterType: Ensemble, Steps: []InferenceStep{svc("a"), svc("b"), node("s")}},
			"s": {RouterType: Sequence, Steps: []InferenceStep{svc("c"), svc("d")}}}}, 2, 4},
		{"a Switch and a Splitter run one, the dearest counts", &InferenceGraphSpec{Nodes: map[string]InferenceRouter{
			"root":  {RouterType: Switch, Steps: []InferenceStep{svc("a"), node("split")}},
			"split": {RouterType: Splitter, Steps: []InferenceStep{svc("b"), node("seq")}},
			"seq":   {RouterType: Sequence, Steps: []InferenceStep{svc("c"), svc("d"), svc("e")}}}}, 3, 3},
		{"a shared node counts each time it runs", chain(3, 2), 3, 8},
		{"exponential fan-out saturates", chain(60, 2), 60, 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			depth, calls := GraphCost(tt.spec)
			assert.Equal(t, tt.depth, depth, "depth")
			assert.Equal(t, tt.stepCalls, calls, "step calls")
		})
	}
	assert.Equal(t, []GraphProblem{
		{Path: "spec.nodes", Detail: "a request would pass a chain of 3 nodes; the limit is 2 (the manager's --graph-max-depth)"},
		{Path: "spec.nodes", Detail: "a request could make 8 step calls; the limit is 4 (the manager's --graph-max-step-calls)"},
	}, ValidateGraphLimits(chain(3, 2), GraphLimits{MaxDepth: 2, MaxStepCalls: 4}))
	assert.Empty(t, ValidateGraphLimits(chain(3, 2), GraphLimits{MaxDepth: 3, MaxStepCalls: 8}), "at the limits")
}

// TestGraphSizeBound: a graph whose nodes are past MaxGraphBytes as JSON
// is refused on spec.nodes alone, naming its size; one just under passes.
func TestGraphSizeBound(t *testing.T) {
	graph := func(nodes int) *InferenceGraph {
		ig := &InferenceGraph{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: InferenceGraphSpec{Nodes: map[string]InferenceRouter{
			GraphRootNode: {RouterType: Sequence, Steps: []InferenceStep{{InferenceTarget: InferenceTarget{ServiceName: "a"}}}}}}}
		// Nodes no request reaches: admission has no other bound on them.
		for i := range nodes {
			ig.Spec.Nodes[fmt.Sprintf("unreached-%04d", i)] = InferenceRouter{RouterType: Sequence,
				Steps: []InferenceStep{{InferenceTarget: InferenceTarget{ServiceName: "a"}}}}
		}
		return ig
	}
	assert.Empty(t, ValidateInferenceGraph(graph(700), DefaultGraphLimits))
	errs := ValidateInferenceGraph(graph(2000), DefaultGraphLimits)
	require.Len(t, errs, 1, "the size alone")
	assert.Equal(t, "spec.nodes", errs[0].Field)
	assert.Regexp(t, `the nodes are \d+ bytes as JSON; the limit is 65536: the router receives the graph as one command-line argument`, errs[0].Detail)
}
