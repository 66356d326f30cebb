package router

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the router's Prometheus metrics, per node and step. Each
// step's series are resolved once when the graph compiles, so a request
// costs no label lookups.
type Metrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	stepCalls    *prometheus.CounterVec
	stepDuration *prometheus.HistogramVec
	byClass      [6]prometheus.Counter
	all          prometheus.Observer
}

// The outcomes of a step call.
const (
	outcomeOK     = "ok"     // a 2xx response
	outcomeFailed = "failed" // an answer other than 2xx
	outcomeError  = "error"  // no answer: refused, reset, timed out
)

// NewMetrics registers the router's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serval_router_requests_total", Help: "Requests through the graph, by status class (2xx, 4xx, 5xx).",
		}, []string{"code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "serval_router_request_duration_seconds", Help: "Time from a request's arrival to its response's headers.", Buckets: buckets,
		}, nil),
		stepCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serval_router_step_requests_total", Help: "Calls to each step, by outcome: ok (2xx), failed (other status), error (no answer).",
		}, []string{"node", "step", "outcome"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "serval_router_step_duration_seconds", Help: "Time of each step call, to its response's headers.", Buckets: buckets,
		}, []string{"node", "step"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.stepCalls, m.stepDuration)
	}
	m.all = m.duration.WithLabelValues()
	for class := 1; class <= 5; class++ {
		m.byClass[class] = m.requests.WithLabelValues(string(rune('0'+class)) + "xx")
	}
	return m
}

type stepMetrics struct {
	ok, failed, errored prometheus.Counter
	duration            prometheus.Observer
}

func (m *Metrics) step(node, step string) stepMetrics {
	if m == nil {
		return stepMetrics{}
	}
	return stepMetrics{
		ok:       m.stepCalls.WithLabelValues(node, step, outcomeOK),
		failed:   m.stepCalls.WithLabelValues(node, step, outcomeFailed),
		errored:  m.stepCalls.WithLabelValues(node, step, outcomeError),
		duration: m.stepDuration.WithLabelValues(node, step),
	}
}

func (s stepMetrics) observe(start time.Time, status int, err error) {
	if s.duration == nil {
		return
	}
	s.duration.Observe(time.Since(start).Seconds())
	switch {
	case err != nil:
		s.errored.Inc()
	case status/100 == 2:
		s.ok.Inc()
	default:
		s.failed.Inc()
	}
}

func (m *Metrics) request(start time.Time, status int) {
	if m == nil {
		return
	}
	m.all.Observe(time.Since(start).Seconds())
	if class := status / 100; class >= 1 && class <= 5 {
		m.byClass[class].Inc()
	}
}
