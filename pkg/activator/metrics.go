package activator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the activator's Prometheus metrics, labelled with the
// component (its namespace and Service).
type Metrics struct {
	heldVec      *prometheus.GaugeVec
	forwardedVec *prometheus.HistogramVec
	timedOutVec  *prometheus.CounterVec
	rejectedVec  *prometheus.CounterVec
	coldStartVec *prometheus.HistogramVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"namespace", "service"}
	m := &Metrics{
		heldVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "serval_activator_held_requests",
			Help: "Requests held for a component with no ready replica."}, labels),
		forwardedVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "serval_activator_forwarded_seconds",
			Help:    "How long each held request waited before it was forwarded.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}, labels),
		timedOutVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "serval_activator_timed_out_total",
			Help: "Held requests answered 503 because no replica became ready in time."}, labels),
		rejectedVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "serval_activator_rejected_total",
			Help: "Requests refused instead of held, by reason (queue-full, busy, body-too-large, body-timeout, body-unreadable)."}, append(labels, "reason")),
		coldStartVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "serval_activator_cold_start_seconds",
			Help:    "From the first request held to a ready replica.",
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 12)}, labels),
	}
	reg.MustRegister(m.heldVec, m.forwardedVec, m.timedOutVec, m.rejectedVec, m.coldStartVec)
	return m
}

func (m *Metrics) setHeld(k Key, n int) {
	if m != nil {
		m.heldVec.WithLabelValues(k.Namespace, k.Name).Set(float64(n))
	}
}

func (m *Metrics) forwarded(k Key, waited time.Duration) {
	if m != nil {
		m.forwardedVec.WithLabelValues(k.Namespace, k.Name).Observe(waited.Seconds())
	}
}

func (m *Metrics) timedOut(k Key) {
	if m != nil {
		m.timedOutVec.WithLabelValues(k.Namespace, k.Name).Inc()
	}
}

func (m *Metrics) rejected(k Key, reason string) {
	if m != nil {
		m.rejectedVec.WithLabelValues(k.Namespace, k.Name, reason).Inc()
	}
}

func (m *Metrics) coldStart(k Key, d time.Duration) {
	if m != nil {
		m.coldStartVec.WithLabelValues(k.Namespace, k.Name).Observe(d.Seconds())
	}
}
