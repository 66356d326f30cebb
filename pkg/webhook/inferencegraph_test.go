package webhook_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func graphYAML(name, annotations, spec string) string {
	return "apiVersion: serving.serval.dev/v1alpha1\nkind: InferenceGraph\nmetadata:\n  name: " + name + "\n  namespace: default\n" + annotations + "spec:\n" + spec
}

func TestInferenceGraphAdmission(t *testing.T) {
	require.NoError(t, create(graphYAML("valid", "", `  nodes:
    root:
      routerType: Sequence
      steps:
      - {serviceName: classifier}
      - {nodeName: split, data: $response}
    split:
      routerType: Splitter
      steps:
      - {serviceName: model-a, weight: 30}
      - {serviceUrl: "http://model-b.default/v1/models/b:predict", weight: 70}
`)), "a valid graph is admitted")
	tests := []struct{ name, annotations, spec, want string }{
		{"no root", "", "  nodes:\n    start: {routerType: Sequence, steps: [{serviceName: a}]}\n",
			`spec.nodes: Invalid value: a node named "root" is required: every request enters there`},
		{"a cycle", "", "  nodes:\n    root: {routerType: Sequence, steps: [{nodeName: a}]}\n    a: {routerType: Ensemble, steps: [{nodeName: root}]}\n",
			"spec.nodes: Invalid value: the nodes form a cycle (a -> root -> a): a request would never end"},
		{"weights", "", "  nodes:\n    root: {routerType: Splitter, steps: [{serviceName: a, weight: 60}, {serviceName: b, weight: 60}]}\n",
			"spec.nodes.root.steps: Invalid value: the weights of a Splitter's steps must sum to 100, not 120"},
		{"two targets", "", "  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: a, nodeName: root}]}\n",
			"spec.nodes.root.steps[0]: Invalid value: set exactly one of nodeName, serviceName and serviceUrl (2 are set)"},
		{"a condition that does not parse", "", "  nodes:\n    root: {routerType: Switch, steps: [{serviceName: a, condition: 'instances.#(x>1'}]}\n",
			`spec.nodes.root.steps[0].condition: Invalid value: "instances.#(x>1" has an unclosed '('`},
		{"a router type", "", "  nodes:\n    root: {routerType: Fanout, steps: [{serviceName: a}]}\n",
			`spec.nodes.root.routerType: Unsupported value: "Fanout"`},
		{"a service name", "", "  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: Model_A}]}\n",
			`spec.nodes.root.steps[0].serviceName: Invalid value: "Model_A": names an InferenceService: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`},
		{"a deployment mode", "  annotations: {serving.serval.dev/deploymentMode: Sideways}\n", "  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: a}]}\n",
			`metadata.annotations[serving.serval.dev/deploymentMode]: Unsupported value: "Sideways": supported values: "Standard", "Knative", "RawDeployment", "Serverless"`},
		{"replicas", "", "  minReplicas: 3\n  maxReplicas: 2\n  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: a}]}\n",
			"spec.minReplicas: Invalid value: 3: must not exceed maxReplicas (2)"},
	}
	tests = append(tests,
		struct{ name, annotations, spec, want string }{"too deep", "", chainYAML(11, 1),
			"spec.nodes: Invalid value: a request would pass a chain of 11 nodes; the limit is 10 (the manager's --graph-max-depth)"},
		struct{ name, annotations, spec, want string }{"too many step calls", "", chainYAML(7, 2),
			"spec.nodes: Invalid value: a request could make 128 step calls; the limit is 64 (the manager's --graph-max-step-calls)"},
	)
	require.NoError(t, create(graphYAML("at-the-limits", "", chainYAML(6, 2))), "a graph of 6 nodes and 64 step calls is admitted")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(graphYAML("bad", tt.annotations, tt.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// chainYAML is the nodes of a graph of n Sequence nodes, each calling the
// next fanOut times; the last calls a service fanOut times.
func chainYAML(n, fanOut int) string {
	var b strings.Builder
	b.WriteString("  nodes:\n")
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		if i == 0 {
			name = "root"
		}
		step := fmt.Sprintf("{nodeName: n%d}", i+1)
		if i == n-1 {
			step = "{serviceName: model}"
		}
		steps := strings.TrimSuffix(strings.Repeat(step+", ", fanOut), ", ")
		fmt.Fprintf(&b, "    %s: {routerType: Sequence, steps: [%s]}\n", name, steps)
	}
	return b.String()
}

// TestInferenceGraphSizeAdmission: a graph whose nodes pass 64 KiB as JSON
// is refused on its size alone (its router could not start with it).
func TestInferenceGraphSizeAdmission(t *testing.T) {
	var b strings.Builder
	b.WriteString("  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: a}]}\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "    unreached-%04d: {routerType: Sequence, steps: [{serviceName: a}]}\n", i)
	}
	err := create(graphYAML("huge", "", b.String()))
	require.Error(t, err)
	assert.Regexp(t, `spec.nodes: Invalid value: the nodes are \d+ bytes as JSON; the limit is 65536: the router receives the graph as one command-line argument, which Linux caps at 128 KiB`, err.Error())
}
