package standard

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// +kubebuilder:rbac:groups=opentelemetry.io,resources=opentelemetrycollectors,verbs=get;list;watch;create;update;patch;delete

// OpenTelemetryCollectorKind is the OpenTelemetry operator's collector,
// which KServe creates for PodMetric triggers; built as Unstructured.
var OpenTelemetryCollectorKind = kinds.Kind{
	GVK:     schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollector"},
	CRD:     "opentelemetrycollectors.opentelemetry.io",
	Install: "install the OpenTelemetry operator (https://opentelemetry.io/docs/platforms/kubernetes/operator/), or scale on Resource or External metrics",
	// The operator's status says nothing Serval reports.
	StatusSignal: kinds.NoStatus,
}

// KServe's collector settings (its inferenceservice-config defaults).
const (
	// DefaultOTelReceiver is where the collector sends the pods' metrics:
	// KEDA's OpenTelemetry add-on.
	DefaultOTelReceiver = "keda-otel-scaler.keda.svc:4317"
	// otelScrapeInterval is how often the collector scrapes the pod.
	otelScrapeInterval = "5s"
	// defaultMetricsPort is the pod's metrics port without the runtime's
	// prometheus.kserve.io/port annotation.
	defaultMetricsPort = "8080"
)

// otelMetricNames are the metric names of c's PodMetric triggers with the
// opentelemetry backend: a collector is made for them, none without.
func otelMetricNames(c *components.Component) []string {
	spec, err := v1beta1.AutoScalingOf(&c.Extension)
	if err != nil || spec == nil {
		return nil
	}
	var names []string
	for _, m := range spec.Metrics {
		if m.Type == v1beta1.PodMetricSourceType && m.PodMetric != nil && m.PodMetric.Metric.Backend == "opentelemetry" {
			names = append(names, m.PodMetric.Metric.MetricNames...)
		}
	}
	return names
}

// MakeOpenTelemetryCollector returns the sidecar collector KServe makes
// for a component scaled on pod metrics: it scrapes the pod's metrics
// port, labels each data point with its namespace, Deployment and pod (the
// labels the trigger's metricQuery selects on), keeps the named metrics,
// and sends them to KEDA's add-on. nil when c has no such metric.
func MakeOpenTelemetryCollector(c *components.Component) *unstructured.Unstructured {
	names := otelMetricNames(c)
	if len(names) == 0 || !WantsScaledObject(c) {
		return nil
	}
	port := c.Annotations["prometheus.kserve.io/port"]
	if port == "" {
		port = defaultMetricsPort
	}
	metricNames := make([]any, len(names))
	for i, n := range names {
		metricNames[i] = n
	}
	config := map[string]any{
		"receivers": map[string]any{"prometheus": map[string]any{"config": map[string]any{"scrape_configs": []any{map[string]any{
			"job_name": "otel-collector", "scrape_interval": otelScrapeInterval,
			"static_configs": []any{map[string]any{"targets": []any{"localhost:" + port}}},
		}}}}},
		"processors": map[string]any{
			"resourcedetection/env": map[string]any{"detectors": []any{"env"}, "timeout": "2s", "override": false},
			"transform": map[string]any{"metric_statements": []any{map[string]any{"context": "datapoint", "statements": []any{
				`set(attributes["namespace"], resource.attributes["k8s.namespace.name"])`,
				`set(attributes["deployment"], resource.attributes["k8s.deployment.name"])`,
				`set(attributes["pod"], resource.attributes["k8s.pod.name"])`,
			}}}},
			"filter/metrics": map[string]any{"metrics": map[string]any{"include": map[string]any{"match_type": "strict", "metric_names": metricNames}}},
		},
		"exporters": map[string]any{"otlp": map[string]any{"endpoint": DefaultOTelReceiver, "compression": "none", "tls": map[string]any{"insecure": true}}},
		"service": map[string]any{"pipelines": map[string]any{"metrics": map[string]any{
			"receivers": []any{"prometheus"}, "processors": []any{"resourcedetection/env", "transform", "filter/metrics"}, "exporters": []any{"otlp"},
		}}},
	}
	return unstructuredChild(c, OpenTelemetryCollectorKind, map[string]any{"mode": "sidecar", "config": config})
}
