package localmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

func cache(name, uri, size string, groups ...string) v1alpha1.LocalModelCache {
	return v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name"},
		Spec: v1alpha1.LocalModelCacheSpec{SourceModelUri: uri, ModelSize: resource.MustParse(size), NodeGroups: groups}}
}

func nsCache(ns, name, uri, size string, groups ...string) v1alpha1.LocalModelNamespaceCache {
	return v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.LocalModelNamespaceCacheSpec{LocalModelCacheSpec: v1alpha1.LocalModelCacheSpec{SourceModelUri: uri, ModelSize: resource.MustParse(size), NodeGroups: groups}}}
}

func TestChoose(t *testing.T) {
	now := metav1.Now()
	deleting := cache("gone", "hf://org/gone", "1Gi", "gpu")
	deleting.DeletionTimestamp = &now
	caches := []v1alpha1.LocalModelCache{
		cache("llama", "hf://meta/llama", "16Gi", "gpu", "cpu"),
		cache("bert", "s3://models/bert/", "1Gi", "cpu"),
		deleting,
	}
	ns := []v1alpha1.LocalModelNamespaceCache{nsCache("team", "mine", "hf://meta/llama", "16Gi", "fast")}
	shared := nsCache("team", "shared", "hf://org/shared", "16Gi")
	shared.Spec.PVCRef = "models"
	onClaim := []v1alpha1.LocalModelNamespaceCache{shared}
	cases := []struct {
		name        string
		uri         string
		annotations map[string]string
		ns          []v1alpha1.LocalModelNamespaceCache
		want        string // kind/name/group/uri, "" for none
	}{
		{"exact URI, first group", "hf://meta/llama", nil, nil, "LocalModelCache/llama/gpu/pvc://serval-model-llama-gpu"},
		{"below the cache's URI", "s3://models/bert/v2/", nil, nil, "LocalModelCache/bert/cpu/pvc://serval-model-bert-cpu/v2"},
		{"a prefix that is not a folder", "hf://meta/llama-2", nil, nil, ""},
		{"the node group named", "hf://meta/llama", map[string]string{v1alpha1.NodeGroupAnnotation: "cpu"}, nil, "LocalModelCache/llama/cpu/pvc://serval-model-llama-cpu"},
		{"a node group the cache is not on", "hf://meta/llama", map[string]string{v1alpha1.NodeGroupAnnotation: "tpu"}, nil, ""},
		{"disabled", "hf://meta/llama", map[string]string{v1alpha1.DisableLocalModelAnnotation: "true"}, nil, ""},
		{"a namespace cache first", "hf://meta/llama", nil, ns, "LocalModelNamespaceCache/mine/fast/pvc://serval-nsmodel-mine-fast"},
		{"a cache being deleted is not chosen", "hf://org/gone", nil, nil, ""},
		{"a namespace cache on a claim, on any node", "hf://org/shared/v1", nil, onClaim, "LocalModelNamespaceCache/shared//pvc://models/models/" + v1alpha1.CopyKey("team", "hf://org/shared") + "/v1"},
		{"not for a service that names a node group", "hf://org/shared", map[string]string{v1alpha1.NodeGroupAnnotation: "fast"}, onClaim, ""},
		{"no URI", "", nil, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := Choose(tc.uri, tc.annotations, tc.ns, caches)
			got := ""
			if u != nil {
				got = u.Kind() + "/" + u.Cache.GetName() + "/" + u.Group + "/" + u.URI
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCheckRoom(t *testing.T) {
	g := &v1alpha1.LocalModelNodeGroup{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: v1alpha1.LocalModelNodeGroupSpec{StorageLimit: resource.MustParse("100Gi")}}
	a, b := cache("llama", "hf://meta/llama", "60Gi", "gpu"), cache("mistral", "hf://mistral/7b", "20Gi", "gpu")
	other := cache("elsewhere", "hf://x/y", "90Gi", "cpu")
	sameTeam := nsCache("team", "llama-too", "hf://mistral/7b", "20Gi", "gpu")
	sameTeam2 := nsCache("team", "mistral-again", "hf://mistral/7b", "20Gi", "gpu")
	all := []v1alpha1.ModelCache{&a, &b, &other}
	cases := []struct {
		name, uri, size, skip string
		want                  string
	}{
		{"fits", "hf://new/model", "20Gi", "", ""},
		{"over the sum", "hf://new/model", "30Gi", "",
			"node group gpu has a storageLimit of 100Gi and its caches take 80Gi (llama: 60Gi, mistral: 20Gi): 30Gi more makes 110Gi"},
		{"over the limit alone", "hf://new/model", "101Gi", "", "modelSize 101Gi exceeds the storageLimit 100Gi of node group gpu"},
		{"the cache itself is left out on update", "hf://meta/llama", "80Gi", "llama", ""},
		{"a URI already cached takes no more room", "hf://mistral/7b", "30Gi", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CheckRoom(g, "", tc.uri, resource.MustParse(tc.size), all, tc.skip))
		})
	}
	u := UsageOf("gpu", all, "")
	assert.Equal(t, "80Gi", u.Used.String())

	// A namespace's caches keep a copy of their own: one of a cluster
	// cache's URI takes room of its own, and shares only with its own
	// namespace's caches.
	assert.Equal(t, "node group gpu has a storageLimit of 100Gi and its caches take 80Gi, of which namespace team's take 0 (none): 30Gi more makes 110Gi",
		CheckRoom(g, "team", "hf://mistral/7b", resource.MustParse("30Gi"), all, ""),
		"a namespace cache of a cluster cache's URI is a copy of its own; the refusal names no other namespace's cache")
	withTeam := []v1alpha1.ModelCache{&a, &b, &other, &sameTeam, &sameTeam2}
	u = UsageOf("gpu", withTeam, "")
	assert.Equal(t, "100Gi", u.Used.String(), "the cluster's copy and the namespace's, once each")
	assert.Empty(t, CheckRoom(g, "team", "hf://mistral/7b", resource.MustParse("20Gi"), withTeam, ""), "a third cache of the namespace's copy takes no more room")
}

// TestNamespaceShare: one namespace's caches take at most their share of a
// group (half its storageLimit unless namespaceStorageLimit says), so a
// tenant that declares most of the group leaves the cluster's caches their
// room; the refusal names only the tenant's own caches.
func TestNamespaceShare(t *testing.T) {
	g := &v1alpha1.LocalModelNodeGroup{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: v1alpha1.LocalModelNodeGroupSpec{StorageLimit: resource.MustParse("100Gi")}}
	alice := nsCache("team-a", "big", "hf://a/big", "40Gi", "gpu")
	bob := nsCache("team-b", "secret-project", "hf://b/secret", "10Gi", "gpu")
	all := []v1alpha1.ModelCache{&alice, &bob}
	assert.Equal(t, "the caches of namespace team-a may take 50Gi of node group gpu (namespaceStorageLimit) and take 40Gi (team-a/big: 40Gi): 45Gi more makes 85Gi",
		CheckRoom(g, "team-a", "hf://a/bigger", resource.MustParse("45Gi"), all, ""))
	assert.Empty(t, CheckRoom(g, "", "hf://admin/llama", resource.MustParse("8Gi"), all, ""), "the administrator's cache fits")
	assert.Empty(t, CheckRoom(g, "team-a", "hf://a/small", resource.MustParse("10Gi"), all, ""), "within the share")
	g.Spec.NamespaceStorageLimit = ptr.To(resource.MustParse("90Gi"))
	assert.Empty(t, CheckRoom(g, "team-a", "hf://a/bigger", resource.MustParse("45Gi"), all, ""), "a share the administrator raised")
	g.Spec.NamespaceStorageLimit = ptr.To(resource.MustParse("100Gi"))
	msg := CheckRoom(g, "team-a", "hf://a/huge", resource.MustParse("55Gi"), all, "")
	assert.Equal(t, "node group gpu has a storageLimit of 100Gi and its caches take 50Gi, of which namespace team-a's take 40Gi (team-a/big: 40Gi): 55Gi more makes 105Gi", msg)
	assert.NotContains(t, msg, "secret-project", "another tenant's cache")
}

func node(name string, ready bool, labels map[string]string) corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func TestNodesOf(t *testing.T) {
	g := &v1alpha1.LocalModelNodeGroup{Spec: v1alpha1.LocalModelNodeGroupSpec{PersistentVolumeSpec: corev1.PersistentVolumeSpec{
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}}}}}}}}
	nodes := []corev1.Node{node("b", true, map[string]string{"pool": "gpu"}), node("a", true, map[string]string{"pool": "gpu"}),
		node("c", false, map[string]string{"pool": "gpu"}), node("d", true, map[string]string{"pool": "cpu"})}
	ready, notReady := NodesOf(g, nodes)
	assert.Equal(t, []string{"a", "b"}, ready)
	assert.Equal(t, []string{"c"}, notReady)
	assert.Nil(t, first(NodesOf(&v1alpha1.LocalModelNodeGroup{}, nodes)), "a group without node affinity selects no node")
}

func first(a, _ []string) []string { return a }

func TestCacheStatus(t *testing.T) {
	u := users{isvcs: []v1alpha1.NamespacedName{{Namespace: "b", Name: "x"}, {Namespace: "a", Name: "y"}}}
	u.sort()
	cases := []struct {
		name    string
		copies  []copyState
		missing []string
		reason  string
		message string
	}{
		{"all there", []copyState{{node: "a", status: v1alpha1.NodeDownloaded}, {node: "b", status: v1alpha1.NodeDownloaded}, {node: "c", status: v1alpha1.NodeNotReady}},
			nil, ReasonDownloaded, "2 of 3 nodes hold the model; 1 not ready"},
		{"downloading", []copyState{{node: "a", status: v1alpha1.NodeDownloaded}, {node: "b", status: v1alpha1.NodeDownloading}},
			nil, ReasonDownloading, "1 of 2 nodes hold the model; waiting for b Downloading"},
		{"failed", []copyState{{node: "a", status: v1alpha1.NodeDownloadError, detail: v1alpha1.LocalModelDetail{Reason: "BackoffLimitExceeded", Message: "404 Not Found", Attempts: 3}}},
			nil, ReasonDownloadFailed, "0 of 1 nodes hold the model; the download failed on a (BackoffLimitExceeded: 404 Not Found, after 3 attempts)"},
		{"a pod that cannot run", []copyState{{node: "a", status: v1alpha1.NodeDownloadPending, detail: v1alpha1.LocalModelDetail{Reason: "ImagePullBackOff", Message: "pod dl: container download: back-off"}}},
			nil, ReasonDownloading, "0 of 1 nodes hold the model; waiting for a DownloadPending (ImagePullBackOff: pod dl: container download: back-off)"},
		{"no nodes", nil, nil, ReasonNoNodes, "no node matches the node affinity of its node groups"},
		{"missing group", nil, []string{"tpu"}, ReasonNodeGroupNotFound, "no LocalModelNodeGroup named tpu"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := cacheStatus(tc.copies, tc.missing, u, 4)
			assert.Equal(t, tc.reason, st.Conditions[0].Reason)
			assert.Equal(t, tc.message, st.Conditions[0].Message)
			assert.Equal(t, tc.reason == ReasonDownloaded, st.Conditions[0].Status == metav1.ConditionTrue)
			assert.Equal(t, []v1alpha1.NamespacedName{{Namespace: "a", Name: "y"}, {Namespace: "b", Name: "x"}}, st.InferenceServices)
		})
	}
}
