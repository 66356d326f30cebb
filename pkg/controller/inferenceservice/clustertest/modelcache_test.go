package clustertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
)

// createNode creates a node with labels, ready or not.
func createNode(t *testing.T, name string, ready bool, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	require.NoError(t, k8s.Create(ctx, n))
	setNodeReady(t, name, ready)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), n) })
}

func setNodeReady(t *testing.T, name string, ready bool) {
	t.Helper()
	n := &corev1.Node{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Name: name}, n))
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	require.NoError(t, k8s.Status().Update(context.Background(), n))
}

// createGroup creates a node group of the nodes labelled pool=name, on a
// hostPath disk.
func createGroup(t *testing.T, name, limit string) {
	t.Helper()
	g := &v1alpha1.LocalModelNodeGroup{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeGroupSpec{
		StorageLimit: resource.MustParse(limit),
		PersistentVolumeSpec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/models"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}}}},
		},
		PersistentVolumeClaimSpec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}}},
	}}
	require.NoError(t, k8s.Create(context.Background(), g))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), g) })
}

func getCache(t *testing.T, name string) *v1alpha1.LocalModelCache {
	t.Helper()
	c := &v1alpha1.LocalModelCache{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Name: name}, c))
	return c
}

// reportCopy plays the node agent: the model's folder on the node holds
// the model (a copy found there before any download).
func reportCopy(t *testing.T, node, key string) {
	t.Helper()
	eventually(t, "the node's report written", func() bool {
		lmn := &v1alpha1.LocalModelNode{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Name: node}, lmn); err != nil {
			return false
		}
		if lmn.Status.Copies == nil {
			lmn.Status.Copies = map[string]v1alpha1.LocalModelCopy{}
		}
		lmn.Status.Copies[key] = v1alpha1.LocalModelCopy{State: v1alpha1.CopyPresent, Job: lmn.Status.Models[key].Job, Bytes: 1 << 30, Digest: "d1"}
		return k8s.Status().Update(context.Background(), lmn) == nil
	})
}

func listedOn(node, key string) bool {
	lmn := &v1alpha1.LocalModelNode{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Name: node}, lmn); err != nil {
		return false
	}
	return slices.ContainsFunc(lmn.Spec.LocalModels, func(m v1alpha1.LocalModelInfo) bool { return m.StatusKey() == key })
}

func readyReason(c *v1alpha1.LocalModelCache) string { return readyReasonOf(c.Status.Conditions) }

func readyReasonOf(conds []metav1.Condition) string {
	if r := meta.FindStatusCondition(conds, localmodel.ConditionReady); r != nil {
		return r.Reason
	}
	return ""
}

// podVolumeClaim is the claim the predictor's pods mount the model from,
// or "".
func podVolumeClaim(d *appsv1.Deployment) string {
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// TestModelCacheLifecycle: a cache is listed on the ready nodes of its
// group, its volumes and claims are made, its status follows the nodes'
// reports; an InferenceService of its URI waits while it downloads, then
// moves onto it (the claim, the group's nodes, no storage initializer),
// and back to downloading its model when the cache is deleted; the cache
// leaves its nodes' lists; a node that leaves the group loses its entry.
func TestModelCacheLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createNode(t, "mc-n1", true, map[string]string{"pool": "mc"})
	createNode(t, "mc-n2", true, map[string]string{"pool": "mc"})
	createNode(t, "mc-n3", false, map[string]string{"pool": "mc"})
	createGroup(t, "mc", "100Gi")
	createClusterRuntime(t, "mc-hf", "hf-mc")

	// Before any cache: the model is downloaded.
	createISVC(t, ns, "llm", "hf-mc", withPredictor(func(p *v1beta1.PredictorSpec) { p.Model.StorageURI = ptr.To("hf://meta/llama/instruct") }))
	eventually(t, "downloaded by the storage initializer", func() bool { return initImage(ns, "llm-predictor") != "" })

	cache := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "llama"}, Spec: v1alpha1.LocalModelCacheSpec{
		SourceModelUri: "hf://meta/llama", ModelSize: resource.MustParse("16Gi"), NodeGroups: []string{"mc"}}}
	require.NoError(t, k8s.Create(ctx, cache))
	eventually(t, "listed on the ready nodes", func() bool { return listedOn("mc-n1", "llama") && listedOn("mc-n2", "llama") })
	assert.False(t, listedOn("mc-n3", "llama"), "a node not ready gets no entry")
	if !exists(&corev1.Namespace{}, "", "serval-localmodel-jobs") {
		eventually(t, "the missing Jobs' namespace said", func() bool {
			r := meta.FindStatusCondition(getCache(t, "llama").Status.Conditions, localmodel.ConditionReady)
			return r != nil && r.Reason == localmodel.ReasonVolumeFailed && strings.Contains(r.Message, `namespaces "serval-localmodel-jobs" not found`)
		})
		require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serval-localmodel-jobs"}}))
	}
	eventually(t, "the download claim and its volume", func() bool {
		return exists(&corev1.PersistentVolumeClaim{}, "serval-localmodel-jobs", "llama-mc") && exists(&corev1.PersistentVolume{}, "", "llama-mc-download")
	})
	eventually(t, "downloading", func() bool {
		c := getCache(t, "llama")
		return readyReason(c) == localmodel.ReasonDownloading && c.Status.NodeStatus["mc-n3"] == v1alpha1.NodeNotReady &&
			c.Status.ModelCopies != nil && c.Status.ModelCopies.Total == 3
	})
	eventually(t, "the service waits for the copies", func() bool {
		c := cond(getISVC(t, ns, "llm"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == "ModelCacheDownloading" && c.Message == "LocalModelCache llama: 0 of 3 nodes hold the model; waiting for "+
			"mc-n1 DownloadPending (WaitingForNodeAgent: waiting for the node agent of node group mc to report the model's folder), "+
			"mc-n2 DownloadPending (WaitingForNodeAgent: waiting for the node agent of node group mc to report the model's folder)"
	})
	eventually(t, "the group's space", func() bool {
		g := &v1alpha1.LocalModelNodeGroup{}
		require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: "mc"}, g))
		return g.Status.Used.String() == "16Gi" && g.Status.Available.String() == "84Gi" && slices.Equal(g.Status.Nodes, []string{"mc-n1", "mc-n2", "mc-n3"})
	})

	reportCopy(t, "mc-n1", "llama")
	reportCopy(t, "mc-n2", "llama")
	eventually(t, "ready", func() bool {
		c := getCache(t, "llama")
		return readyReason(c) == localmodel.ReasonDownloaded && c.Status.ModelCopies.Available == 2
	})
	key := v1alpha1.StorageKey("hf://meta/llama")
	eventually(t, "the service on the cache", func() bool {
		d, err := getDeployment(ns, "llm-predictor")
		return err == nil && podVolumeClaim(d) == "serval-model-llama-mc" && initImage(ns, "llm-predictor") == ""
	})
	d, err := getDeployment(ns, "llm-predictor")
	require.NoError(t, err)
	mount := d.Spec.Template.Spec.Containers[0].VolumeMounts
	assert.True(t, slices.ContainsFunc(mount, func(m corev1.VolumeMount) bool { return m.SubPath == "instruct" && m.ReadOnly }), "%v", mount)
	terms := d.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	assert.Equal(t, "pool", terms[0].MatchExpressions[0].Key, "on the group's nodes")
	eventually(t, "the service's claim, and the service listed as a user", func() bool {
		c := getCache(t, "llama")
		return exists(&corev1.PersistentVolumeClaim{}, ns, "serval-model-llama-mc") && exists(&corev1.PersistentVolume{}, "", "serval-model-llama-mc-"+ns) &&
			slices.Contains(c.Status.InferenceServices, v1alpha1.NamespacedName{Namespace: ns, Name: "llm"})
	})
	// The service's volume is the model's folder alone, read-only.
	pv := &corev1.PersistentVolume{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: "serval-model-llama-mc-" + ns}, pv))
	assert.Equal(t, "/models/models/"+key, pv.Spec.HostPath.Path)
	assert.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, pv.Spec.AccessModes)
	eventually(t, "the status says so", func() bool {
		mc := getISVC(t, ns, "llm").Status.Components[v1beta1.PredictorComponent].ModelCache
		return mc != nil && *mc == v1beta1.ModelCacheRef{Kind: "LocalModelCache", Name: "llama", NodeGroup: "mc"}
	})

	// At steady state a reconcile writes nothing: not the cache's status,
	// not a node's list.
	rv := func() string { return getCache(t, "llama").ResourceVersion }
	lmnRV := func() string {
		lmn := &v1alpha1.LocalModelNode{}
		require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: "mc-n1"}, lmn))
		return lmn.ResourceVersion
	}
	eventually(t, "settled", func() bool {
		before := rv()
		time.Sleep(500 * time.Millisecond)
		return rv() == before
	})
	cacheRV, nodeRV, done := rv(), lmnRV(), reconciles.Of("localmodelcache", "", "llama")
	n3 := &corev1.Node{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: "mc-n3"}, n3))
	n3.Labels["zone"] = "b"
	require.NoError(t, k8s.Update(ctx, n3))
	eventually(t, "a reconcile", func() bool { return reconciles.Of("localmodelcache", "", "llama") > done })
	time.Sleep(time.Second)
	assert.Equal(t, cacheRV, rv(), "the cache is not written at steady state")
	assert.Equal(t, nodeRV, lmnRV(), "nor a node's list")

	// A node that leaves the group loses its entry.
	n2 := &corev1.Node{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: "mc-n2"}, n2))
	n2.Labels["pool"] = "other"
	require.NoError(t, k8s.Update(ctx, n2))
	eventually(t, "off the node that left", func() bool { return !listedOn("mc-n2", "llama") })

	// Deleted (admission, which refuses it while in use, is not in this
	// suite): the service downloads again, the nodes forget the model.
	require.NoError(t, k8s.Delete(ctx, cache))
	eventually(t, "the service downloads again", func() bool {
		d, err := getDeployment(ns, "llm-predictor")
		return err == nil && podVolumeClaim(d) == "" && initImage(ns, "llm-predictor") != ""
	})
	eventually(t, "gone from the nodes, and gone", func() bool {
		return !listedOn("mc-n1", "llama") && !exists(&v1alpha1.LocalModelCache{}, "", "llama")
	})
	assert.Nil(t, getISVC(t, ns, "llm").Status.Components[v1beta1.PredictorComponent].ModelCache)
}

// TestNamespaceCacheAndAgent: a namespace cache's claim is in its own
// namespace and its volume belongs to its group, deleted with the cache;
// the agent's DaemonSet runs on a group's nodes when serval-config enables
// it, and goes when it is disabled.
func TestNamespaceCacheAndAgent(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createNode(t, "nc-n1", true, map[string]string{"pool": "nc"})
	createGroup(t, "nc", "10Gi")
	c := &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Name: "bert", Namespace: ns}, Spec: v1alpha1.LocalModelNamespaceCacheSpec{
		LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: "s3://models/bert", ModelSize: resource.MustParse("1Gi"), NodeGroups: []string{"nc"}}}}
	require.NoError(t, k8s.Create(ctx, c))
	eventually(t, "listed on the node", func() bool { return listedOn("nc-n1", ns+"/bert") })
	pvName := "serval-nsdownload-bert-nc-" + ns
	eventually(t, "its claim and volume", func() bool {
		return exists(&corev1.PersistentVolumeClaim{}, ns, "serval-nsdownload-bert-nc") && exists(&corev1.PersistentVolume{}, "", pvName)
	})
	pv := &corev1.PersistentVolume{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: pvName}, pv))
	assert.Equal(t, "LocalModelNodeGroup", metav1.GetControllerOf(pv).Kind)

	require.NoError(t, k8s.Delete(ctx, c))
	eventually(t, "its volume deleted with it", func() bool {
		pv := &corev1.PersistentVolume{}
		err := k8s.Get(ctx, types.NamespacedName{Name: pvName}, pv)
		return (err != nil || pv.DeletionTimestamp != nil) && !listedOn("nc-n1", ns+"/bert")
	})

	setConfig(t, map[string]string{"localModel.agent.enabled": "true"})
	eventually(t, "the agent on the group's nodes", func() bool {
		ds := &appsv1.DaemonSet{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: managerNamespace, Name: "serval-node-agent-nc"}, ds); err != nil {
			return false
		}
		spec := ds.Spec.Template.Spec
		return spec.Volumes[0].HostPath.Path == "/models/models" && spec.Affinity.NodeAffinity != nil
	})
	setConfig(t, map[string]string{})
	eventually(t, "the agent gone", func() bool {
		ds := &appsv1.DaemonSet{}
		err := k8s.Get(ctx, types.NamespacedName{Namespace: managerNamespace, Name: "serval-node-agent-nc"}, ds)
		return err != nil || ds.DeletionTimestamp != nil
	})
}

// TestNamespaceCacheOnAClaim: a namespace cache on a claim of its own
// namespace (pvcRef) checks the claim, downloads once into it with a Job,
// is Ready when the Job succeeds, and its services mount the claim on any
// node.
func TestNamespaceCacheOnAClaim(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	newClaim := func(name string, mode corev1.PersistentVolumeAccessMode) {
		require.NoError(t, k8s.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{mode},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}}}}))
	}
	newCache := func(name, claim string) {
		require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.LocalModelNamespaceCacheSpec{
			LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: "hf://Qwen/" + name, ModelSize: resource.MustParse("2Gi")}, PVCRef: claim}}))
	}
	nsCond := func(name string) *metav1.Condition {
		got := &v1alpha1.LocalModelNamespaceCache{}
		require.NoError(t, k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got))
		return meta.FindStatusCondition(got.Status.Conditions, localmodel.ConditionReady)
	}
	newClaim("rwo", corev1.ReadWriteOnce)
	newCache("refused", "rwo")
	eventually(t, "the claim refused", func() bool {
		r := nsCond("refused")
		return r != nil && r.Reason == localmodel.ReasonClaimNotReady && r.Message == "the claim rwo is not ReadWriteMany: the pods of every node mount it"
	})
	newClaim("shared", corev1.ReadWriteMany)
	newCache("qwen", "shared")
	job := &batchv1.Job{}
	eventually(t, "the download Job", func() bool {
		return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "qwen-download"}, job) == nil
	})
	spec := job.Spec.Template.Spec
	assert.Equal(t, "shared", spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	key := v1alpha1.CopyKey(ns, "hf://Qwen/qwen")
	assert.Equal(t, "models/"+key, spec.Containers[0].VolumeMounts[0].SubPath)
	assert.Nil(t, spec.Affinity, "on any node")
	assert.Equal(t, int32(2), *job.Spec.BackoffLimit, "three attempts in all")

	createClusterRuntime(t, "claim-hf", "hf-claim")
	createISVC(t, ns, "qwen", "hf-claim", withPredictor(func(p *v1beta1.PredictorSpec) { p.Model.StorageURI = ptr.To("hf://Qwen/qwen") }))
	eventually(t, "the service waits for the download", func() bool {
		c := cond(getISVC(t, ns, "qwen"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == "ModelCacheDownloading"
	})
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	require.NoError(t, k8s.Status().Update(ctx, job))
	eventually(t, "ready", func() bool { r := nsCond("qwen"); return r != nil && r.Status == metav1.ConditionTrue })
	eventually(t, "the service mounts the claim", func() bool {
		d, err := getDeployment(ns, "qwen-predictor")
		return err == nil && podVolumeClaim(d) == "shared" && d.Spec.Template.Spec.Affinity == nil
	})
}
