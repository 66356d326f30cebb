package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// applyModelMountsPolicy loads the chart's admission policy of model
// mounts, as config/policy holds it.
func applyModelMountsPolicy(t *testing.T) {
	t.Helper()
	objs, err := testenv.PolicyObjects("model-mounts.yaml")
	require.NoError(t, err)
	for _, o := range objs {
		require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(context.Background(), o)))
	}
}

// mountPod is a pod of ns that mounts claim, writable or not.
func mountPod(ns, claim string, volumeReadOnly, mountReadOnly bool) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "reader-", Namespace: ns}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "sh", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "m", MountPath: "/m", ReadOnly: mountReadOnly}}}},
		Volumes: []corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: claim, ReadOnly: volumeReadOnly}}}}}}
}

// TestTenantsShareNoCopy: two namespace users beside an administrator. A
// namespace cache of a cluster cache's URI is a copy of its own (its own
// folder, its own state), and leaves the cluster cache's status as it was;
// the namespace whose service uses the cluster cache holds a claim of that
// model's folder alone, which its admin cannot mount writable (the
// server's dry run of such a pod is refused, a read-only one admitted).
func TestTenantsShareNoCopy(t *testing.T) {
	ctx := context.Background()
	applyModelMountsPolicy(t)
	tenantA, tenantB := newNamespace(t), newNamespace(t)
	createNode(t, "tc-n1", true, map[string]string{"pool": "tc"})
	createGroup(t, "tc", "100Gi")
	createClusterRuntime(t, "tc-hf", "hf-tc")
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serval-localmodel-jobs"}})))

	const uri = "hf://org/shared-model"
	admins := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: v1alpha1.LocalModelCacheSpec{
		SourceModelUri: uri, ModelSize: resource.MustParse("1Gi"), NodeGroups: []string{"tc"}}}
	require.NoError(t, k8s.Create(ctx, admins))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), admins) })
	sneaky := &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Name: "sneaky", Namespace: tenantA}, Spec: v1alpha1.LocalModelNamespaceCacheSpec{
		LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: uri, ModelSize: resource.MustParse("1Gi"), NodeGroups: []string{"tc"}}}}
	require.NoError(t, k8s.Create(ctx, sneaky))
	// Both at once: whichever creates the node's list first, the other's
	// entry joins it.
	eventually(t, "both listed", func() bool { return listedOn("tc-n1", "shared") && listedOn("tc-n1", tenantA+"/sneaky") })

	// The tenant's copy arrives: its cache is Ready, the cluster cache is
	// not, and no copy of the tenant's is the administrator's.
	reportCopy(t, "tc-n1", tenantA+"/sneaky")
	eventually(t, "the tenant's cache ready", func() bool {
		got := &v1alpha1.LocalModelNamespaceCache{}
		require.NoError(t, k8s.Get(ctx, types.NamespacedName{Namespace: tenantA, Name: "sneaky"}, got))
		return readyReasonOf(got.Status.Conditions) == "Downloaded"
	})
	time.Sleep(time.Second)
	c := getCache(t, "shared")
	assert.Equal(t, "Downloading", readyReason(c), "the cluster cache waits for its own copy")
	assert.Equal(t, 0, c.Status.ModelCopies.Available)
	assert.NotEqual(t, v1alpha1.CopyKey(tenantA, uri), v1alpha1.CopyKey("", uri), "two folders")

	// The other tenant's service on the cluster cache: a claim of the
	// model's folder alone, mounted read-only by the service, and by no
	// pod of the namespace writable.
	reportCopy(t, "tc-n1", "shared")
	createISVC(t, tenantB, "user", "hf-tc", withPredictor(func(p *v1beta1.PredictorSpec) { p.Model.StorageURI = ptr.To(uri) }))
	claim := "serval-model-shared-tc"
	eventually(t, "the service's claim", func() bool { return exists(&corev1.PersistentVolumeClaim{}, tenantB, claim) })
	pv := &corev1.PersistentVolume{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: claim + "-" + tenantB}, pv))
	assert.Equal(t, "/models/models/"+v1alpha1.CopyKey("", uri), pv.Spec.HostPath.Path, "the folder alone")

	dryRun := client.DryRunAll
	eventually(t, "the policy loaded", func() bool {
		err := k8s.Create(ctx, mountPod(tenantB, claim, false, false), dryRun)
		return err != nil && strings.Contains(err.Error(), "serval-model-mounts")
	})
	for _, tc := range []struct {
		volume, mount bool
		refused       string
	}{
		{false, false, "set persistentVolumeClaim.readOnly: true"},
		{true, false, "a container mounts a cached model"},
		{false, true, "set persistentVolumeClaim.readOnly: true"},
		{true, true, ""},
	} {
		err := k8s.Create(ctx, mountPod(tenantB, claim, tc.volume, tc.mount), dryRun)
		if tc.refused == "" {
			assert.NoError(t, err, "a read-only mount is admitted")
			continue
		}
		require.Error(t, err, "volume read-only %v, mount read-only %v", tc.volume, tc.mount)
		assert.Contains(t, err.Error(), tc.refused)
	}
	// Any other claim is the namespace's own business.
	assert.NoError(t, k8s.Create(ctx, mountPod(tenantB, "scratch", false, false), dryRun))
}
