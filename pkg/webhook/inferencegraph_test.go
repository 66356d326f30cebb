package webhook_test

import (
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(graphYAML("bad", tt.annotations, tt.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
