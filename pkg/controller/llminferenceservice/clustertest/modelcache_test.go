package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestServiceOnAModelCache: an LLMInferenceService whose model a cache
// holds waits while it downloads (MainWorkloadReady says why), then mounts
// the cached copy with no storage initializer, and says so in its status.
func TestServiceOnAModelCache(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	require.NoError(t, k8s.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "models", Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}))
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Name: "opt", Namespace: ns},
		Spec: v1alpha1.LocalModelNamespaceCacheSpec{PVCRef: "models",
			LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: "hf://facebook/opt-125m", ModelSize: resource.MustParse("1Gi")}}}))
	createService(t, ns, "opt", `
  model: {uri: hf://facebook/opt-125m}
`)
	eventually(t, "waiting for the cache", func() bool {
		return condition(t, ns, "opt", v1alpha2.ConditionMainWorkloadReady) == "False/ModelCacheDownloading"
	})
	assert.False(t, exists(&appsv1.Deployment{}, ns, "opt-kserve"), "no pod would find the whole model yet")

	job := &batchv1.Job{}
	eventually(t, "the download Job", func() bool {
		return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "opt-download"}, job) == nil
	})
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	require.NoError(t, k8s.Status().Update(ctx, job))

	dep := &appsv1.Deployment{}
	eventually(t, "the Deployment on the cached copy", func() bool { return exists(dep, ns, "opt-kserve") })
	pod := dep.Spec.Template.Spec
	assert.Empty(t, pod.InitContainers, "no storage initializer")
	var claim string
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	assert.Equal(t, "models", claim)
	makeAvailable(t, ns, "opt-kserve")
	eventually(t, "the status names the cache", func() bool {
		w := get(t, ns, "opt").Status.Workloads
		return w != nil && w.ModelCache != nil && *w.ModelCache == v1beta1.ModelCacheRef{Kind: "LocalModelNamespaceCache", Name: "opt", Namespace: ns}
	})
}
