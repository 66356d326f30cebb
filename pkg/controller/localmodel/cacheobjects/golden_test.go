package cacheobjects

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apply"
)

// gpuGroup is a group of local NVMe disks on the nodes labelled pool=gpu.
func gpuGroup() *v1alpha1.LocalModelNodeGroup {
	return &v1alpha1.LocalModelNodeGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "group-uid"},
		Spec: v1alpha1.LocalModelNodeGroupSpec{
			StorageLimit: resource.MustParse("1Ti"),
			PersistentVolumeSpec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              "local-models",
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/nvme/models"}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}}}}},
			},
			PersistentVolumeClaimSpec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
				StorageClassName: ptr.To("local-models"),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}},
			},
		},
	}
}

func volumesOf(t *testing.T, vols []Volume) []apply.Object {
	var objs []apply.Object
	for _, v := range vols {
		os, err := v.Objects()
		require.NoError(t, err)
		objs = append(objs, os...)
	}
	return objs
}

// TestVolumesGolden renders a cluster cache's volumes and claims (the
// download claim in the Jobs' namespace, a serving claim in a user's
// namespace) and a namespace cache's (one claim, its volume owned by the
// group).
func TestVolumesGolden(t *testing.T) {
	c := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "llama3-8b", UID: "cache-uid"},
		Spec: v1alpha1.LocalModelCacheSpec{SourceModelUri: "hf://meta-llama/Meta-Llama-3-8B", ModelSize: resource.MustParse("16Gi"), NodeGroups: []string{"gpu"}}}
	vols := Volumes(c, []*v1alpha1.LocalModelNodeGroup{gpuGroup()}, map[string][]string{"team-a": {"gpu"}, "serval-localmodel-jobs": {"gpu"}}, "serval-localmodel-jobs")
	golden.Check(t, "cluster-cache-volumes", golden.Objects(t, volumesOf(t, vols)))

	nc := &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Name: "bert", Namespace: "team-b", UID: "ns-cache-uid"},
		Spec: v1alpha1.LocalModelNamespaceCacheSpec{LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: "s3://models/bert", ModelSize: resource.MustParse("1Gi"), NodeGroups: []string{"gpu"}}}}
	golden.Check(t, "namespace-cache-volumes", golden.Objects(t, volumesOf(t, Volumes(nc, []*v1alpha1.LocalModelNodeGroup{gpuGroup()}, nil, "serval-localmodel-jobs"))))
}

// TestAgentGolden renders a group's node agent: on the group's nodes, with
// the very path of the group's volumes mounted.
func TestAgentGolden(t *testing.T) {
	ds, err := Agent(AgentInputs{Group: gpuGroup(), Namespace: "serval-system", Image: "ghcr.io/serval-dev/serval-manager:v1.0.0"})
	require.NoError(t, err)
	golden.Check(t, "agent-daemonset", golden.Objects(t, []apply.Object{ds}))

	nfs := gpuGroup()
	nfs.Spec.PersistentVolumeSpec.Local = nil
	nfs.Spec.PersistentVolumeSpec.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/models"}
	_, err = Agent(AgentInputs{Group: nfs, Namespace: "serval-system", Image: "x"})
	require.ErrorContains(t, err, "neither a hostPath nor a local volume")
}
