package dev

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
)

// TestSamplesAreCheckedBeforeTheCluster: a sample with nothing to follow,
// or none of that name, is refused with the list of those that run; the
// list holds the README's samples and not the others.
func TestSamplesAreCheckedBeforeTheCluster(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	for _, name := range []string{"inference-graph", "servingruntime", "nope"} {
		_, _, err := checkSample(root, name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `sample "`+name+`" cannot run`)
		assert.Contains(t, err.Error(), "the samples that run are: ")
	}
	runnable := runnableSamples(root)
	for _, name := range []string{"sklearn", "onnx", "llm", "llm-pd", "multinode", "localmodel"} {
		assert.Contains(t, runnable, name)
	}
	assert.NotContains(t, runnable, "inference-graph")
	path, target, err := checkSample(root, "")
	require.NoError(t, err)
	assert.Contains(t, path, "config/samples/sklearn.yaml")
	assert.Equal(t, "InferenceService", target.GetKind())
}
