package webhook_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

func groupYAML(name, limit, volume string) string {
	return "apiVersion: serving.serval.dev/v1alpha1\nkind: LocalModelNodeGroup\nmetadata:\n  name: " + name + "\nspec:\n  storageLimit: " + limit + "\n" +
		"  persistentVolumeSpec:\n    capacity: {storage: 1Ti}\n    accessModes: [ReadWriteOnce]\n    " + volume + "\n" +
		"    nodeAffinity:\n      required:\n        nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [" + name + "]}]}]\n" +
		"  persistentVolumeClaimSpec:\n    accessModes: [ReadWriteOnce]\n    resources: {requests: {storage: 1Ti}}\n"
}

func cacheYAML(name, uri, size string, groups ...string) string {
	return fmt.Sprintf("apiVersion: serving.serval.dev/v1alpha1\nkind: LocalModelCache\nmetadata:\n  name: %s\nspec:\n  sourceModelUri: %s\n  modelSize: %s\n  nodeGroups: %q\n",
		name, uri, size, groups)
}

// TestModelCacheAdmission: a cache's URI must be one a download Job
// fetches; its size must fit its groups' limit, with the other caches'
// models, and the message gives the figures; a cache in use is not
// deleted, and the message names its users; a group in use is not deleted
// nor shrunk below what its caches take.
func TestModelCacheAdmission(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, create(groupYAML("adm-gpu", "100Gi", "hostPath: {path: /models}")))
	err := create(groupYAML("adm-nfs", "100Gi", "nfs: {server: nfs, path: /models}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.persistentVolumeSpec: Invalid value: \"\": must be a hostPath or local volume")
	for volume, want := range map[string]string{
		"hostPath: {path: /}":               `spec.persistentVolumeSpec.hostPath.path: Invalid value: "/": must not be the node's root`,
		"hostPath: {path: /etc/models}":     `spec.persistentVolumeSpec.hostPath.path: Invalid value: "/etc/models": must not be at or under /etc, a system directory of the node`,
		"local: {path: /var/run}":           `spec.persistentVolumeSpec.local.path: Invalid value: "/var/run": must not be at or under /var/run`,
		"hostPath: {path: /data/../etc}":    `must be an absolute path, without ".." or a trailing "/"`,
		"hostPath: {path: relative/models}": `must be an absolute path`,
	} {
		err := create(groupYAML("adm-path", "100Gi", volume))
		require.Error(t, err, volume)
		assert.Contains(t, err.Error(), want, volume)
	}

	require.NoError(t, create(cacheYAML("adm-llama", "hf://meta/llama", "60Gi", "adm-gpu")))
	require.NoError(t, create(cacheYAML("adm-mistral", "hf://mistral/7b", "20Gi", "adm-gpu")))
	err = create(cacheYAML("adm-big", "hf://org/big", "30Gi", "adm-gpu"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "node group adm-gpu has a storageLimit of 100Gi and its caches take 80Gi (adm-llama: 60Gi, adm-mistral: 20Gi): 30Gi more makes 110Gi")

	for uri, want := range map[string]string{
		"pvc://claim/model":   "a pvc:// model is on a claim already",
		"oci://reg/model:1":   "an oci:// model is an image",
		"ftp://host/model":    `storageUri scheme "ftp" is not supported`,
		"hf://meta/llama/sub": "", // another URI: admitted (the room allows 20Gi)
	} {
		err := create(cacheYAML("adm-uri", uri, "1Gi", "adm-gpu"))
		if want == "" {
			require.NoError(t, err)
			require.NoError(t, k8s.Delete(ctx, &v1alpha1.LocalModelCache{ObjectMeta: objectMeta("adm-uri")}))
			continue
		}
		require.Error(t, err, uri)
		assert.Contains(t, err.Error(), want)
	}
	err = create(cacheYAML("adm-twice", "hf://meta/llama", "1Gi", "adm-gpu"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LocalModelCache adm-llama already caches it")
	// A cluster cache may come before its group (KServe admits it); the
	// group then checks the room.
	require.NoError(t, create(cacheYAML("adm-early", "hf://org/early", "70Gi", "adm-later")))
	err = create(groupYAML("adm-later", "50Gi", "hostPath: {path: /models}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its caches take 70Gi (adm-early: 70Gi)")
	err = create("apiVersion: serving.serval.dev/v1alpha1\nkind: LocalModelNamespaceCache\nmetadata:\n  name: adm-nogroup\n  namespace: default\n" +
		"spec:\n  sourceModelUri: hf://org/x\n  modelSize: 1Gi\n  nodeGroups: [adm-missing]\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.nodeGroups[0]: Not found: "adm-missing"`)
	err = create("apiVersion: serving.serval.dev/v1alpha1\nkind: LocalModelNamespaceCache\nmetadata:\n  name: adm-both\n  namespace: default\n" +
		"spec:\n  sourceModelUri: hf://org/x\n  modelSize: 1Gi\n  nodeGroups: [adm-gpu]\n  pvcRef: models\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set exactly one of pvcRef and nodeGroups")

	// The group may not shrink below its caches, nor go while they use it.
	g := &v1alpha1.LocalModelNodeGroup{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Name: "adm-gpu"}, g))
	g.Spec.StorageLimit = resource.MustParse("50Gi")
	err = k8s.Update(ctx, g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its caches take 80Gi (adm-llama: 60Gi, adm-mistral: 20Gi)")
	err = k8s.Delete(ctx, &v1alpha1.LocalModelNodeGroup{ObjectMeta: objectMeta("adm-gpu")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "node group adm-gpu is used by LocalModelCache adm-llama, LocalModelCache adm-mistral")

	// A service on the cache holds it.
	require.NoError(t, create(isvcYAML("adm-user", "", "    model:\n      modelFormat: {name: huggingface}\n      storageUri: hf://meta/llama\n")))
	llama := &v1alpha1.LocalModelCache{ObjectMeta: objectMeta("adm-llama")}
	deadline := time.Now().Add(30 * time.Second)
	for err = k8s.Delete(ctx, llama, client.DryRunAll); err == nil; err = k8s.Delete(ctx, llama, client.DryRunAll) {
		require.True(t, time.Now().Before(deadline), "the cache was not held by its user")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Contains(t, err.Error(), "LocalModelCache adm-llama is in use by InferenceService default/adm-user; delete them, or give them the serving.serval.dev/disable-localmodel annotation, first")

	// Off the cache, the service no longer holds it.
	isvc := &v1beta1.InferenceService{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "adm-user"}, isvc))
	isvc.Annotations = map[string]string{v1alpha1.DisableLocalModelAnnotation: "true"}
	require.NoError(t, k8s.Update(ctx, isvc))
	for err = k8s.Delete(ctx, llama); err != nil; err = k8s.Delete(ctx, llama) {
		require.True(t, time.Now().Before(deadline), "still refused: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
