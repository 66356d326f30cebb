package workload_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

func custom(name string, annotations map[string]string, change func(*v1beta1.InferenceServiceSpec)) *v1beta1.InferenceService {
	i := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "models", UID: "uid-1", Annotations: annotations}}
	i.Spec.Predictor.Containers = []corev1.Container{{Name: "kserve-container", Image: "example.com/model:1",
		Ports: []corev1.ContainerPort{{Name: "http1", ContainerPort: 8080}, {Name: "grpc", ContainerPort: 9000}}}}
	if change != nil {
		change(&i.Spec)
	}
	return i
}

var keda = map[string]string{v1beta1.AutoscalerClassAnnotation: "keda"}

func raw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func TestGolden(t *testing.T) {
	cases := []struct {
		name    string
		isvc    *v1beta1.InferenceService
		builder workload.Mode
	}{
		{"standard-hpa", custom("hpa", nil, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](2), 5
			s.Predictor.ScaleMetric, s.Predictor.ScaleTarget = ptr.To(v1beta1.ScaleMetricMemory), ptr.To[int32](70)
		}), standard.Mode{}},
		{"standard-hpa-autoscaling", custom("hpa-metrics", nil, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](2), 6
			s.Predictor.AutoScaling = raw(`{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}},` +
				`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"2Gi"}}}]}`)
		}), standard.Mode{}},
		{"standard-no-autoscaler", custom("fixed", map[string]string{v1beta1.AutoscalerClassAnnotation: "none"}, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas = ptr.To[int32](3)
			s.Predictor.DeploymentStrategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}), standard.Mode{}},
		{"standard-agent", custom("logged", nil, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.Logger = raw(`{"url":"http://broker.events"}`)
			s.Predictor.Batcher = raw(`{"maxBatchSize":8}`)
		}), standard.Mode{}},
		{"knative-agent", custom("kn-logged", map[string]string{v1beta1.DeploymentModeAnnotation: "Knative"}, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.Logger = raw(`{"mode":"response"}`)
		}), knative.Mode{}},
		{"keda-resource", custom("keda-cpu", keda, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](1), 5
			s.Predictor.AutoScaling = raw(`{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},` +
				`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}]}`)
		}), standard.Mode{}},
		{"keda-external", custom("keda-prom", keda, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](0), 10
			s.Predictor.AutoScaling = raw(`{"metrics":[{"type":"External","external":{"metric":{"backend":"prometheus","serverAddress":"http://prometheus.monitoring:9090",` +
				`"query":"sum(rate(http_requests_total{service=\"keda-prom-predictor\"}[1m]))","namespace":"monitoring"},"target":{"type":"Value","value":"2.5"},` +
				`"authenticationRef":{"authenticationRef":{"name":"prom-auth"},"authModes":"bearer"}}}]}`)
		}), standard.Mode{}},
		{"keda-podmetric", custom("keda-otel", keda, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MaxReplicas = 3
			s.Predictor.AutoScaling = raw(`{"metrics":[{"type":"PodMetric","podmetric":{"metric":{"backend":"opentelemetry","metricNames":["process_cpu_seconds_total"],` +
				`"query":"process_cpu_seconds_total","operationOverTime":"last_one"},"target":{"type":"Value","value":"4"}}}]}`)
		}), standard.Mode{}},
		{"keda-default", custom("keda-plain", keda, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.ScaleMetric, s.Predictor.ScaleTarget = ptr.To(v1beta1.ScaleMetricMemory), ptr.To[int32](70)
		}), standard.Mode{}},
		{"knative-canary", custom("kn", map[string]string{v1beta1.DeploymentModeAnnotation: "Knative"}, func(s *v1beta1.InferenceServiceSpec) {
			s.Predictor.MinReplicas, s.Predictor.CanaryTrafficPercent = ptr.To[int32](0), ptr.To[int64](10)
			s.Predictor.ScaleMetric, s.Predictor.TimeoutSeconds = ptr.To(v1beta1.ScaleMetricRPS), ptr.To[int64](120)
		}), knative.Mode{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := components.Inputs{ISVC: tc.isvc, Config: config.Default()}
			if tc.builder == (knative.Mode{}) {
				in.PreviousRolledOutRevisions = map[v1beta1.ComponentType]string{v1beta1.PredictorComponent: "kn-predictor-00001"}
			}
			comps, err := components.Build(in)
			require.NoError(t, err)
			objs, err := tc.builder.Objects(comps[0])
			require.NoError(t, err)
			var out strings.Builder
			for _, o := range objs {
				data, err := yaml.Marshal(o.Spec)
				require.NoError(t, err)
				out.WriteString("---\n")
				out.Write(data)
			}
			golden.Check(t, tc.name, []byte(out.String()))
		})
	}
}
