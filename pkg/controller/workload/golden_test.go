package workload_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
	"github.com/serval-dev/serval/pkg/runtime"
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
			golden.Check(t, tc.name, golden.Objects(t, objs))
		})
	}
}

// TestMultiNodeGolden renders a multi-node predictor on Serval's multinode
// runtime: the head Deployment and Service, the worker Deployment, and the
// headless Services of this generation.
func TestMultiNodeGolden(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "config/runtimes/kserve-huggingfaceserver-multinode.yaml"))
	require.NoError(t, err)
	crt := &v1alpha1.ClusterServingRuntime{}
	require.NoError(t, yaml.UnmarshalStrict(data, crt))
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "models", UID: "uid-1", Generation: 3,
		Annotations: map[string]string{v1beta1.AutoscalerClassAnnotation: "none"}}}
	isvc.Spec.Predictor.Model = &v1beta1.ModelSpec{ModelFormat: v1beta1.ModelFormat{Name: "huggingface"},
		PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("pvc://models/llama-70b"),
			Container: v1beta1.Container{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}, Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}}
	isvc.Spec.Predictor.WorkerSpec = raw(`{"pipelineParallelSize":3,"tensorParallelSize":2,"containers":[{"name":"worker-container",` +
		`"resources":{"requests":{"nvidia.com/gpu":"2"},"limits":{"nvidia.com/gpu":"2"}}}]}`)
	v1beta1.Default(isvc)
	sel := &runtime.Selection{Runtime: runtime.FromClusterServingRuntime(crt), Protocol: v1beta1.ProtocolV1}
	comps, err := components.Build(components.Inputs{ISVC: isvc, Config: config.Default(), Runtime: sel})
	require.NoError(t, err)
	objs, err := standard.Mode{}.Objects(comps[0])
	require.NoError(t, err)
	golden.Check(t, "standard-multinode", golden.Objects(t, objs))
}

// TestModelCacheGolden renders a predictor whose model a cache holds, in
// both modes: the cached copy's claim mounted at /mnt/models (no storage
// initializer) and the pods required on the node group's nodes.
func TestModelCacheGolden(t *testing.T) {
	mc := &components.ModelCache{
		Ref:    v1beta1.ModelCacheRef{Kind: "LocalModelCache", Name: "llama3-8b", NodeGroup: "gpu"},
		Source: "hf://meta-llama/Meta-Llama-3-8B", URI: "pvc://llama3-8b-gpu/models/c41ae4f29d692d55",
		Affinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}}}}},
	}
	for _, tc := range []struct {
		name    string
		mode    workload.Mode
		annots  map[string]string
		tolerAt string
	}{
		{"standard-model-cache", standard.Mode{}, nil, ""},
		{"knative-model-cache", knative.Mode{}, map[string]string{v1beta1.DeploymentModeAnnotation: "Knative"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isvc := custom("cached", tc.annots, func(s *v1beta1.InferenceServiceSpec) {
				s.Predictor.Containers[0].Env = []corev1.EnvVar{{Name: "STORAGE_URI", Value: mc.Source}}
				// The pod's own affinity is kept: both hold.
				s.Predictor.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
			})
			in := components.Inputs{ISVC: isvc, Config: config.Default(), ModelCache: mc}
			if tc.mode == (knative.Mode{}) {
				in.PreviousRolledOutRevisions = map[v1beta1.ComponentType]string{v1beta1.PredictorComponent: "cached-predictor-00001"}
			}
			comps, err := components.Build(in)
			require.NoError(t, err)
			require.Equal(t, mc.Ref, *comps[0].ModelCache)
			objs, err := tc.mode.Objects(comps[0])
			require.NoError(t, err)
			golden.Check(t, tc.name, golden.Objects(t, objs))
		})
	}
}

// TestScaleFromZeroGolden renders a Standard-mode predictor that KEDA
// scales to zero with the activator installed: its Service is labelled
// for the activator and lists the route's hosts, and its ScaledObject has
// the activator's external-push trigger beside the cpu trigger.
func TestScaleFromZeroGolden(t *testing.T) {
	isvc := custom("idle", keda, func(s *v1beta1.InferenceServiceSpec) {
		s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](0), 4
	})
	comps, err := components.Build(components.Inputs{ISVC: isvc, Config: config.Default()})
	require.NoError(t, err)
	c := comps[0]
	require.True(t, c.KEDAScalesToZero())
	c.Activator = "serval-activator.serval-system.svc.cluster.local:9091"
	c.Hosts = []string{"idle-models.example.com", "idle-predictor.models.svc.cluster.local"}
	objs, err := standard.Mode{}.Objects(c)
	require.NoError(t, err)
	golden.Check(t, "standard-scale-from-zero", golden.Objects(t, objs))

	c.Extension.MinReplicas = ptr.To[int32](1)
	assert.False(t, c.KEDAScalesToZero(), "minReplicas 1 does not scale to zero")
}
