package inferenceservice

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Metrics are Serval's own metrics, besides controller-runtime's.
type Metrics struct {
	conditions *conditionCollector
	applies    *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg. The condition metric reports
// nothing until SetReader gives it the InferenceServices to read.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		conditions: &conditionCollector{desc: prometheus.NewDesc("serval_inferenceservice_condition",
			"The conditions of each InferenceService: one series per condition type, for its current status and reason, with value 1.",
			[]string{"namespace", "name", "type", "status", "reason"}, nil)},
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serval_apply_total",
			Help: "Child objects written (server-side apply, handover, prune) or skipped as unchanged, by kind.",
		}, []string{"kind", "result"}),
	}
	reg.MustRegister(m.conditions, m.applies)
	return m
}

// SetReader makes the condition metric read the InferenceServices from r,
// the manager's cache; the last manager to set it is the one reported.
func (m *Metrics) SetReader(r client.Reader) { m.conditions.reader.Store(&r) }

// Write counts a write of a child (apply.Counter).
func (m *Metrics) Write(kind string) { m.applies.WithLabelValues(kind, "write").Inc() }

// Skip counts an unchanged child that was not written (apply.Counter).
func (m *Metrics) Skip(kind string) { m.applies.WithLabelValues(kind, "skip").Inc() }

// conditionCollector reports serval_inferenceservice_condition when the
// metrics are scraped, from the InferenceServices in the cache: one series
// per condition, its current status. Gauges set at each reconcile held a
// second copy of every InferenceService's conditions as label sets (at a
// thousand InferenceServices, a tenth of the manager's live heap), cost label
// hashing at every status change, and had to be deleted by hand; read at
// scrape time, a series is exactly what the status says, and goes with the
// InferenceService.
type conditionCollector struct {
	desc   *prometheus.Desc
	reader atomic.Pointer[client.Reader]
}

// scrapeListTimeout bounds the cache read of a scrape: before the cache has
// synced, the scrape reports no conditions rather than waiting.
const scrapeListTimeout = 2 * time.Second

// Describe implements prometheus.Collector.
func (c *conditionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *conditionCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeListTimeout)
	defer cancel()
	var list v1beta1.InferenceServiceList
	// Read only, so the cache's objects need no copy.
	if err := (*r).List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range list.Items {
		isvc := &list.Items[i]
		for _, cond := range isvc.Status.Conditions {
			// The reason is one of a fixed set (a CamelCase word): it names
			// why a service is not Ready in alerts, at no cardinality a
			// condition's message would have.
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1,
				isvc.Namespace, isvc.Name, cond.Type, string(cond.Status), cond.Reason)
		}
	}
}
