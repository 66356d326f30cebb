package webhook_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runtimeYAML(kind, name, spec string) string {
	ns := ""
	if kind == "ServingRuntime" {
		ns = "\n  namespace: default"
	}
	return "apiVersion: serving.serval.dev/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + ns + "\nspec:\n" + spec
}

const container = "  containers: [{name: kserve-container, image: example.com/server:1}]\n  protocolVersions: [v1]\n"

func TestRuntimePriorityConflictIsRejected(t *testing.T) {
	spec := container + "  supportedModelFormats: [{name: conflict-format, version: '1', autoSelect: true, priority: 2}]\n"
	require.NoError(t, create(runtimeYAML("ClusterServingRuntime", "first", spec)))
	err := create(runtimeYAML("ClusterServingRuntime", "second", spec))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `admission webhook "clusterservingruntime.validate.serving.serval.dev" denied the request`)
	assert.Contains(t, err.Error(), "ClusterServingRuntime second and ClusterServingRuntime first both auto-select model format conflict-format version 1 with priority 2 over protocol v1")
	require.NoError(t, create(runtimeYAML("ClusterServingRuntime", "third",
		container+"  supportedModelFormats: [{name: conflict-format, version: '1', autoSelect: true, priority: 3}]\n")),
		"a different priority is unambiguous")
	// Namespaced runtimes are another scope: no conflict with cluster ones.
	require.NoError(t, create(runtimeYAML("ServingRuntime", "ns-first", spec)))
	err = create(runtimeYAML("ServingRuntime", "ns-second", spec))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ServingRuntime ns-second and ServingRuntime ns-first both auto-select")
}

// TestConflictRightAfterTheFirstIsRejected: a conflicting runtime created
// right after the first, as one `kubectl apply` of a file with both does, is
// rejected every time, not only once a cache has caught up.
func TestConflictRightAfterTheFirstIsRejected(t *testing.T) {
	for i := range 10 {
		format := fmt.Sprintf("back-to-back-%d", i)
		spec := container + "  supportedModelFormats: [{name: " + format + ", autoSelect: true, priority: 1}]\n"
		require.NoError(t, create(runtimeYAML("ClusterServingRuntime", format+"-a", spec)))
		err := create(runtimeYAML("ClusterServingRuntime", format+"-b", spec))
		require.Error(t, err, "%s-b conflicts with %s-a, created just before", format, format)
		assert.Contains(t, err.Error(), "both auto-select model format "+format)
	}
}

func TestBadRuntimesAreRejected(t *testing.T) {
	tests := []struct{ name, spec, want string }{
		{"one format, two priorities", container + "  supportedModelFormats: [{name: a, priority: 1}, {name: a, priority: 2}]\n",
			"model format a already has priority 1 in this runtime; one format takes one priority"},
		{"ModelMesh field", container + "  grpcEndpoint: port:8085\n", "spec.grpcEndpoint: Forbidden: spec.grpcEndpoint is not supported by Serval yet"},
		{"unknown container field", "  containers: [{name: c, imagee: x}]\n", "spec.containers[0].imagee: Forbidden: unknown field"},
		{"a value that does not decode", "  containers: [{name: c, env: [{name: A, value: 1}]}]\n",
			"spec: Invalid value: does not decode: spec.containers[0].env[0].value: must be a string, not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(runtimeYAML("ClusterServingRuntime", "bad", tt.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
