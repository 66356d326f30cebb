package statusmetrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestCollectorReadsTheStatuses: the metrics are the statuses as the reader
// has them: one series per condition of every service kind with its current
// status and reason, one per cache copy with its state; nothing before a
// reader is set and nothing for an object without a status yet.
func TestCollectorReadsTheStatuses(t *testing.T) {
	c := New()
	assert.Zero(t, testutil.CollectAndCount(c), "no reader yet")

	scheme := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	require.NoError(t, v1alpha2.AddToScheme(scheme))
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ready"}}
	isvc.Status.Conditions = []metav1.Condition{ready, {Type: "IngressReady", Status: metav1.ConditionTrue}}
	loading := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "loading"}}
	loading.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ModelLoading"}}
	fresh := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "new"}}
	graph := &v1alpha1.InferenceGraph{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "g"}}
	graph.Status.Conditions = []metav1.Condition{ready}
	llm := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "llm"}}
	llm.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "MissingCRD"}}
	cache := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	cache.Status.NodeStatus = map[string]v1alpha1.NodeStatus{"n1": v1alpha1.NodeDownloaded, "n2": v1alpha1.NodeDownloadError}
	nsCache := &v1alpha1.LocalModelNamespaceCache{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "nc"}}
	nsCache.Status.NodeStatus = map[string]v1alpha1.NodeStatus{"n1": v1alpha1.NodeDownloading}
	c.SetReader(fake.NewClientBuilder().WithScheme(scheme).WithObjects(isvc, loading, fresh, graph, llm, cache, nsCache).Build())

	want := `# HELP serval_condition The conditions of each InferenceService, InferenceGraph and LLMInferenceService: one series per condition type, for its current status and reason, with value 1.
# TYPE serval_condition gauge
serval_condition{kind="InferenceGraph",name="g",namespace="a",reason="",status="True",type="Ready"} 1
serval_condition{kind="InferenceService",name="loading",namespace="b",reason="ModelLoading",status="False",type="Ready"} 1
serval_condition{kind="InferenceService",name="ready",namespace="a",reason="",status="True",type="IngressReady"} 1
serval_condition{kind="InferenceService",name="ready",namespace="a",reason="",status="True",type="Ready"} 1
serval_condition{kind="LLMInferenceService",name="llm",namespace="a",reason="MissingCRD",status="False",type="Ready"} 1
# HELP serval_model_cache_copy The copies of each model cache on its nodes: one series per node, for the copy's state (NodeDownloadError: the copy failed), with value 1.
# TYPE serval_model_cache_copy gauge
serval_model_cache_copy{kind="LocalModelCache",name="c",namespace="",node="n1",status="NodeDownloaded"} 1
serval_model_cache_copy{kind="LocalModelCache",name="c",namespace="",node="n2",status="NodeDownloadError"} 1
serval_model_cache_copy{kind="LocalModelNamespaceCache",name="nc",namespace="a",node="n1",status="NodeDownloading"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
}
