package inferenceservice

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Metrics are Serval's own metrics, besides controller-runtime's.
type Metrics struct {
	conditions *prometheus.GaugeVec
	applies    *prometheus.CounterVec
}

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		conditions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "serval_inferenceservice_condition",
			Help: "The conditions of each InferenceService: one series per condition type, for its current status, with value 1.",
		}, []string{"namespace", "name", "type", "status"}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serval_apply_total",
			Help: "Child objects written (server-side apply, handover, prune) or skipped as unchanged, by kind.",
		}, []string{"kind", "result"}),
	}
	reg.MustRegister(m.conditions, m.applies)
	return m
}

// Write counts a write of a child (apply.Counter).
func (m *Metrics) Write(kind string) { m.applies.WithLabelValues(kind, "write").Inc() }

// Skip counts an unchanged child that was not written (apply.Counter).
func (m *Metrics) Skip(kind string) { m.applies.WithLabelValues(kind, "skip").Inc() }

func (m *Metrics) observe(isvc *v1beta1.InferenceService, conds []metav1.Condition) {
	// One series per condition, its current status: the other statuses'
	// series would triple the memory of the metric (a thousand
	// InferenceServices made it a sixth of the manager's heap) and say
	// nothing a query for "== 1" needs.
	for _, c := range conds {
		for _, s := range conditionStatuses {
			if c.Status == s {
				m.conditions.WithLabelValues(isvc.Namespace, isvc.Name, c.Type, string(s)).Set(1)
			} else {
				m.conditions.DeleteLabelValues(isvc.Namespace, isvc.Name, c.Type, string(s))
			}
		}
	}
}

func (m *Metrics) forget(namespace, name string) {
	m.conditions.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
}
