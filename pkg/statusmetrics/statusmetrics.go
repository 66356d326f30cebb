// Package statusmetrics reports what the services' and model caches'
// statuses say, read from the manager's cache at each scrape:
//
//   - serval_condition{kind,namespace,name,type,status,reason}: 1 per
//     condition of every InferenceService, InferenceGraph and
//     LLMInferenceService, with its current status and reason;
//   - serval_model_cache_copy{kind,namespace,name,node,status}: 1 per copy of
//     a LocalModelCache or LocalModelNamespaceCache on a node, with its state
//     (NodeDownloadError is a copy that failed).
//
// Gauges set at each reconcile would hold a second copy of every status as
// label sets (at a thousand InferenceServices, a tenth of the manager's live
// heap), cost label hashing at every status change and need deleting by
// hand; read at scrape time, a series is exactly what the status says and
// goes with its object.
package statusmetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// The metrics' names, for the dashboards, the alerts and their tests.
const (
	ConditionMetric = "serval_condition"
	CacheCopyMetric = "serval_model_cache_copy"
)

// scrapeListTimeout bounds each cache read of a scrape: before the cache has
// synced, a scrape reports nothing rather than waiting.
const scrapeListTimeout = 2 * time.Second

// Collector is a prometheus.Collector over the statuses in a reader.
type Collector struct {
	conditions, copies *prometheus.Desc
	reader             atomic.Pointer[client.Reader]
}

// New returns a Collector that reports nothing until SetReader.
func New() *Collector {
	return &Collector{
		conditions: prometheus.NewDesc(ConditionMetric,
			"The conditions of each InferenceService, InferenceGraph and LLMInferenceService: one series per condition type, for its current status and reason, with value 1.",
			[]string{"kind", "namespace", "name", "type", "status", "reason"}, nil),
		copies: prometheus.NewDesc(CacheCopyMetric,
			"The copies of each model cache on its nodes: one series per node, for the copy's state (NodeDownloadError: the copy failed), with value 1.",
			[]string{"kind", "namespace", "name", "node", "status"}, nil),
	}
}

// SetReader makes the collector read from r, the manager's cache; the last
// manager to set it is the one reported.
func (c *Collector) SetReader(r client.Reader) { c.reader.Store(&r) }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conditions
	ch <- c.copies
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeListTimeout)
	defer cancel()
	conds := func(kind, namespace, name string, cs []metav1.Condition) {
		for _, cond := range cs {
			// The reason is one of a fixed set (a CamelCase word): it names
			// why a service is not Ready in alerts, at no cardinality a
			// condition's message would have.
			ch <- prometheus.MustNewConstMetric(c.conditions, prometheus.GaugeValue, 1,
				kind, namespace, name, cond.Type, string(cond.Status), cond.Reason)
		}
	}
	copies := func(kind, namespace, name string, nodes map[string]v1alpha1.NodeStatus) {
		for node, st := range nodes {
			ch <- prometheus.MustNewConstMetric(c.copies, prometheus.GaugeValue, 1,
				kind, namespace, name, node, string(st))
		}
	}
	// Read only, so the cache's objects need no copy. A list that fails
	// (a cache not synced yet) reports nothing of its kind.
	for _, k := range serving.ServiceKinds {
		l := k.NewList()
		if (*r).List(ctx, l, client.UnsafeDisableDeepCopy) != nil {
			continue
		}
		items, _ := meta.ExtractList(l)
		for _, item := range items {
			if o, ok := item.(serving.Service); ok {
				conds(k.Name, o.GetNamespace(), o.GetName(), o.GetConditions())
			}
		}
	}
	var caches v1alpha1.LocalModelCacheList
	if (*r).List(ctx, &caches, client.UnsafeDisableDeepCopy) == nil {
		for i := range caches.Items {
			o := &caches.Items[i]
			copies("LocalModelCache", "", o.Name, o.Status.NodeStatus)
		}
	}
	var nsCaches v1alpha1.LocalModelNamespaceCacheList
	if (*r).List(ctx, &nsCaches, client.UnsafeDisableDeepCopy) == nil {
		for i := range nsCaches.Items {
			o := &nsCaches.Items[i]
			copies("LocalModelNamespaceCache", o.Namespace, o.Name, o.Status.NodeStatus)
		}
	}
}
