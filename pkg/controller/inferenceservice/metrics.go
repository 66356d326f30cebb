package inferenceservice

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are Serval's own metrics, besides controller-runtime's.
type Metrics struct {
	applies *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serval_apply_total",
			Help: "Child objects written (server-side apply, handover, prune) or skipped as unchanged, by kind.",
		}, []string{"kind", "result"}),
	}
	reg.MustRegister(m.applies)
	return m
}

// Write counts a write of a child (apply.Counter).
func (m *Metrics) Write(kind string) { m.applies.WithLabelValues(kind, "write").Inc() }

// Skip counts an unchanged child that was not written (apply.Counter).
func (m *Metrics) Skip(kind string) { m.applies.WithLabelValues(kind, "skip").Inc() }
