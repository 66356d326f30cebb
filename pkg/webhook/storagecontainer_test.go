package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modelscopeModel = "    model:\n      modelFormat: {name: sklearn}\n      storageUri: modelscope://qwen/m\n"

// TestStorageContainerAdmitsItsURIs: a URI of a scheme Serval does not
// know is admitted once a ClusterStorageContainer supports it; a predictor
// that names a container which does not take its URI is refused.
func TestStorageContainerAdmitsItsURIs(t *testing.T) {
	err := create(isvcYAML("ms-refused", "", modelscopeModel))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `storageUri scheme "modelscope" is not supported`)

	const sc = "apiVersion: serving.serval.dev/v1alpha1\nkind: ClusterStorageContainer\nmetadata:\n  name: webhook-modelscope\n" +
		"spec:\n  container: {name: storage-initializer, image: example.com/ms:1}\n  supportedUriFormats: [{prefix: 'modelscope://'}]\n"
	require.NoError(t, create(sc))
	// The webhook reads the containers from the manager's cache.
	deadline := time.Now().Add(30 * time.Second)
	for err = create(isvcYAML("ms-admitted", "", modelscopeModel)); err != nil; err = create(isvcYAML("ms-admitted", "", modelscopeModel)) {
		require.True(t, time.Now().Before(deadline), "still refused: %v", err)
		time.Sleep(100 * time.Millisecond)
	}

	err = create(isvcYAML("ms-named", "", "    storageContainerName: webhook-modelscope\n"+sklearnModel))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.predictor.storageContainerName: Invalid value: "webhook-modelscope": the ClusterStorageContainer "webhook-modelscope" does not support the storage URI "gs://models/iris"`)

	err = create("apiVersion: serving.serval.dev/v1alpha1\nkind: ClusterStorageContainer\nmetadata:\n  name: webhook-both\n" +
		"spec:\n  container: {name: storage-initializer}\n  supportedUriFormats: [{prefix: 'x://', regex: 'y'}]\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set exactly one of prefix and regex")
}
