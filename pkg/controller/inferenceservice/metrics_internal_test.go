package inferenceservice

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

func isvcWithConditions(namespace, name string, conds ...metav1.Condition) *v1beta1.InferenceService {
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	isvc.Status.Conditions = conds
	return isvc
}

// TestConditionMetricReadsTheInferenceServices: the condition metric is
// the conditions of the InferenceServices as the reader has them, one
// series per condition with its current status and reason, nothing before a reader is
// set and nothing for an InferenceService without a status yet.
func TestConditionMetricReadsTheInferenceServices(t *testing.T) {
	const name = "serval_inferenceservice_condition"
	m := NewMetrics(prometheus.NewRegistry())
	assert.Zero(t, testutil.CollectAndCount(m.conditions, name), "no reader yet")

	scheme := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(scheme))
	m.SetReader(fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		isvcWithConditions("a", "ready",
			metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue},
			metav1.Condition{Type: v1beta1.ConditionIngressReady, Status: metav1.ConditionTrue}),
		isvcWithConditions("b", "loading",
			metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: "ModelLoading"}),
		isvcWithConditions("b", "new"),
	).Build())
	want := `# HELP serval_inferenceservice_condition The conditions of each InferenceService: one series per condition type, for its current status and reason, with value 1.
# TYPE serval_inferenceservice_condition gauge
serval_inferenceservice_condition{name="loading",namespace="b",reason="ModelLoading",status="False",type="Ready"} 1
serval_inferenceservice_condition{name="ready",namespace="a",reason="",status="True",type="` + v1beta1.ConditionIngressReady + `"} 1
serval_inferenceservice_condition{name="ready",namespace="a",reason="",status="True",type="Ready"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(m.conditions, strings.NewReader(want), name))
}
