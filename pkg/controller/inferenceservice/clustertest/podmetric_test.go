package clustertest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

const collectorCRD = "opentelemetrycollectors.opentelemetry.io"

func collectorExists(ns, name string) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("opentelemetry.io/v1beta1")
	u.SetKind("OpenTelemetryCollector")
	return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u) == nil
}

// TestPodMetricCollector: a PodMetric trigger gets KServe's
// OpenTelemetryCollector; without the operator's CRD the predictor says
// so; scaling on another metric prunes the collector.
func TestPodMetricCollector(t *testing.T) {
	waitCRDGone(t, collectorCRD)
	kedaCRD, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	installCRDsForTest(t, kedaCRD)
	ns := newNamespace(t)
	createClusterRuntime(t, "otel-sklearn", "sklearn-otel")
	createISVC(t, ns, "otel", "sklearn-otel", withAnnotation(v1beta1.AutoscalerClassAnnotation, "keda"),
		withPredictor(func(p *v1beta1.PredictorSpec) {
			p.MaxReplicas = 3
			p.AutoScaling = &apiextensionsv1.JSON{Raw: []byte(`{"metrics":[{"type":"PodMetric","podmetric":{"metric":{"backend":"opentelemetry",` +
				`"metricNames":["vllm:num_requests_running"],"query":"vllm:num_requests_running"},"target":{"type":"Value","value":"4"}}}]}`)}
		}))
	eventually(t, "MissingCRD naming the collector's", func() bool {
		c := cond(getISVC(t, ns, "otel"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == v1beta1.ReasonMissingCRD && strings.Contains(c.Message,
			"the CRD "+collectorCRD+" is not installed, and the predictor needs an OpenTelemetryCollector")
	})

	otelCRD, err := testenv.UpstreamCRDPathsOf(testenv.OpenTelemetry)
	require.NoError(t, err)
	installCRDsForTest(t, otelCRD)
	eventually(t, "the collector once the CRD exists", func() bool { return collectorExists(ns, "otel-predictor") })

	updateISVC(t, ns, "otel", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.AutoScaling = &apiextensionsv1.JSON{Raw: []byte(`{"metrics":[{"type":"Resource","resource":{"name":"cpu",` +
			`"target":{"type":"Utilization","averageUtilization":60}}}]}`)}
	})
	eventually(t, "the collector pruned", func() bool { return !collectorExists(ns, "otel-predictor") })
}
