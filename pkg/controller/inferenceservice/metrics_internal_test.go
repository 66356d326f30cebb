package inferenceservice

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// conditionSeries gathers reg and returns serval_inferenceservice_condition's
// series as "namespace/name type=status value", sorted.
func conditionSeries(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var series []string
	for _, f := range families {
		if f.GetName() != "serval_inferenceservice_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			series = append(series, strings.Join([]string{l["namespace"] + "/" + l["name"], l["type"] + "=" + l["status"]}, " ")+
				map[bool]string{true: " 1", false: " other"}[m.GetGauge().GetValue() == 1])
		}
	}
	sort.Strings(series)
	return series
}

func isvcWithConditions(namespace, name string, conds ...metav1.Condition) *v1beta1.InferenceService {
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	isvc.Status.Conditions = conds
	return isvc
}

// TestConditionMetricReadsTheInferenceServices: the condition metric is
// the conditions of the InferenceServices as the reader has them, one
// series per condition with its current status, nothing before a reader is
// set and nothing for an InferenceService without a status yet.
func TestConditionMetricReadsTheInferenceServices(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	assert.Empty(t, conditionSeries(t, reg), "no reader yet")

	scheme := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(scheme))
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		isvcWithConditions("a", "ready",
			metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue},
			metav1.Condition{Type: v1beta1.ConditionIngressReady, Status: metav1.ConditionTrue}),
		isvcWithConditions("b", "loading",
			metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse}),
		isvcWithConditions("b", "new"),
	).Build()
	m.SetReader(reader)
	assert.Equal(t, []string{
		"a/ready " + v1beta1.ConditionIngressReady + "=True 1",
		"a/ready Ready=True 1",
		"b/loading Ready=False 1",
	}, conditionSeries(t, reg))
}
