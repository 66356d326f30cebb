package components

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// unpropagatedAnnotations are annotations of an InferenceService or graph
// that describe that object itself and must not reach its children.
var unpropagatedAnnotations = []string{
	corev1.LastAppliedConfigAnnotation,
}

// PropagatedAnnotations adds to dst the annotations of an InferenceService
// or graph that its children inherit: all but those about the object itself.
func PropagatedAnnotations(dst, src map[string]string) {
	maps.Copy(dst, src)
	for _, k := range unpropagatedAnnotations {
		delete(dst, k)
	}
}

// metadataFor returns the component's labels and annotations: the runtime's,
// overridden by the InferenceService's metadata, overridden by the
// component's own; Serval's labels are set last and cannot be overridden.
func metadataFor(c *Component, isvc *v1beta1.InferenceService) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	if c.Runtime != nil {
		maps.Copy(labels, c.Runtime.Runtime.Spec.Labels)
		maps.Copy(annotations, c.Runtime.Runtime.Spec.Annotations)
	}
	maps.Copy(labels, isvc.Labels)
	PropagatedAnnotations(annotations, isvc.Annotations)
	maps.Copy(labels, c.Extension.Labels)
	maps.Copy(annotations, c.Extension.Annotations)
	labels[v1beta1.InferenceServiceLabel] = isvc.Name
	// The selector's value: the type, or for a named predictor its name
	// with the type (see selectorFor).
	labels[v1beta1.ComponentLabel] = c.Selector[v1beta1.ComponentLabel]
	if annotations[v1beta1.PrometheusScrapeAnnotation] == "true" {
		addPrometheusAnnotations(annotations, c)
	}
	return labels, annotations
}

// The annotations Prometheus's Kubernetes discovery reads, and KServe's
// runtime annotations that say where a model server serves its metrics.
const (
	prometheusScrape  = "prometheus.io/scrape"
	prometheusPort    = "prometheus.io/port"
	prometheusPath    = "prometheus.io/path"
	runtimeMetricPort = "prometheus.kserve.io/port"
	runtimeMetricPath = "prometheus.kserve.io/path"
)

// addPrometheusAnnotations does what KServe's enable-prometheus-scraping
// does: scrape the pods, at the runtime's metrics port and path when it
// declares them, else the serving port and /metrics. Values already set
// are kept.
func addPrometheusAnnotations(annotations map[string]string, c *Component) {
	setIfAbsent := func(key, value string) {
		if _, ok := annotations[key]; !ok {
			annotations[key] = value
		}
	}
	port, path := strconv.Itoa(int(c.ServingPort())), "/metrics"
	if v := annotations[runtimeMetricPort]; v != "" {
		port = v
	}
	if v := annotations[runtimeMetricPath]; v != "" {
		path = v
	}
	setIfAbsent(prometheusScrape, "true")
	setIfAbsent(prometheusPort, port)
	setIfAbsent(prometheusPath, path)
}
