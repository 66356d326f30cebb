package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/serval-dev/serval/internal/observability"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// TestDashboardsAndAlertsNameExportedMetrics: every metric the chart's
// dashboards and alerts query is one that Serval's running binaries
// export (scraped here from the manager, once it has served samples of
// every kind and a model cache, and from a graph router that has served a
// request) or one docs/observability.md lists as another project's.
func TestDashboardsAndAlertsNameExportedMetrics(t *testing.T) {
	ctx := context.Background()
	const ns = "observe"
	applyGraphSample(t, ns)
	addr, metricsAddr := runLocalRouter(t, ns, "model-chainer")
	waitFor(t, "the router to serve", func() bool {
		resp, err := http.Post("http://"+addr+"/v1/models/model-chainer:predict", "application/json", strings.NewReader(`{"instances":[[1,2,3,4]]}`))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	// A model cache, for the copies' metric; its copies stay pending (no
	// node agent runs), which is a state like any other.
	group := &v1alpha1.LocalModelNodeGroup{ObjectMeta: metav1.ObjectMeta{Name: "observe"}, Spec: v1alpha1.LocalModelNodeGroupSpec{
		StorageLimit: resource.MustParse("10Gi"),
		PersistentVolumeSpec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/observe"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"sandbox-node-2"}}}}}}},
		},
		PersistentVolumeClaimSpec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}}
	cache := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "observe"}, Spec: v1alpha1.LocalModelCacheSpec{
		SourceModelUri: "hf://serval/observe", ModelSize: resource.MustParse("1Gi"), NodeGroups: []string{"observe"}}}
	require.NoError(t, sb.Client.Create(ctx, group))
	require.NoError(t, sb.Client.Create(ctx, cache))
	t.Cleanup(func() {
		_ = sb.Client.Delete(context.Background(), cache)
		_ = sb.Client.Delete(context.Background(), group)
	})

	// The manager runs in this process: its registry is what its /metrics
	// serves.
	manager := httptest.NewServer(promhttp.HandlerFor(crmetrics.Registry, promhttp.HandlerOpts{}))
	t.Cleanup(manager.Close)
	exported := map[string]bool{}
	waitFor(t, "the model cache's copies in the manager's metrics", func() bool {
		names := scrape(t, manager.URL)
		if !names["serval_model_cache_copy"] {
			return false
		}
		for n := range names {
			exported[n] = true
		}
		return true
	})
	for n := range scrape(t, "http://"+metricsAddr) {
		exported[n] = true
	}
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	upstream, err := observability.Upstream(root)
	require.NoError(t, err)
	queries, err := observability.Queries(root)
	require.NoError(t, err)
	for _, q := range queries {
		expr, err := q.Parse()
		require.NoError(t, err, q.Where)
		for _, name := range observability.MetricNames(expr) {
			assert.True(t, exported[name] || upstream[name], "%s: %s is neither exported by Serval's manager or router nor listed as upstream in %s", q.Where, name, observability.DocsFile)
		}
	}
}

// scrape reads a metrics endpoint: the names of its series (a histogram's
// _bucket, _sum and _count, a summary's _sum and _count).
func scrape(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	names := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name+"_sum"], names[name+"_count"] = true, true
		default:
			names[name] = true
		}
	}
	return names
}
