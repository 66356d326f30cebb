package testenv_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/serval-dev/serval/internal/testenv"
)

func TestMetricSum(t *testing.T) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "testenv_metricsum_total", Help: "test"}, []string{"kind", "result"})
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "testenv_metricsum_gauge", Help: "test"}, []string{"name"})
	crmetrics.Registry.MustRegister(c, g)
	t.Cleanup(func() { crmetrics.Registry.Unregister(c); crmetrics.Registry.Unregister(g) })
	c.WithLabelValues("Deployment", "skip").Add(2)
	c.WithLabelValues("Service", "skip").Add(3)
	c.WithLabelValues("Service", "write").Add(7)
	g.WithLabelValues("a").Set(1)

	for _, tc := range []struct {
		name   string
		metric string
		labels map[string]string
		sum    float64
		found  bool
	}{
		{"summed over the other labels", "testenv_metricsum_total", map[string]string{"result": "skip"}, 5, true},
		{"every label must match", "testenv_metricsum_total", map[string]string{"kind": "Service", "result": "write"}, 7, true},
		{"no labels: every series", "testenv_metricsum_total", nil, 12, true},
		{"a gauge", "testenv_metricsum_gauge", map[string]string{"name": "a"}, 1, true},
		{"no such series", "testenv_metricsum_gauge", map[string]string{"name": "b"}, 0, false},
		{"no such metric", "testenv_metricsum_none", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, found, err := testenv.MetricSum(tc.metric, tc.labels)
			require.NoError(t, err)
			assert.Equal(t, tc.sum, sum)
			assert.Equal(t, tc.found, found)
		})
	}
}
