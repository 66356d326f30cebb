package llmobjects_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/storage"
)

// shipped reads the presets Serval installs, strictly: a field they misspell
// fails here.
func shipped(t *testing.T) map[string]*v1alpha2.LLMInferenceServiceConfig {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "config/llmisvcconfig/*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]*v1alpha2.LLMInferenceServiceConfig{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		js, err := yaml.YAMLToJSON(data)
		require.NoError(t, err)
		cfg := &v1alpha2.LLMInferenceServiceConfig{}
		strict, err := sigsjson.UnmarshalStrict(js, cfg.StrictTarget())
		require.NoError(t, err, f)
		require.Empty(t, strict, f)
		cfg.Namespace = "serval-system"
		require.Empty(t, v1alpha2.ValidateConfig(cfg), f)
		out[cfg.Name] = cfg
	}
	return out
}

type source map[string]*v1alpha2.LLMInferenceServiceConfig

func (s source) Config(_ context.Context, name string) (*v1alpha2.LLMInferenceServiceConfig, error) {
	return s[name], nil
}

// TestGolden renders every child of each shape of service with the shipped
// presets.
func TestGolden(t *testing.T) {
	src := source(shipped(t))
	gateway := &v1alpha2.GatewaySpec{Refs: []v1alpha2.GatewayObjectReference{{UntypedObjectReference: v1alpha2.UntypedObjectReference{Name: "inference-gateway", Namespace: "infra"}}}}
	cases := map[string]func(*v1alpha2.LLMInferenceServiceSpec){
		"model-only": func(*v1alpha2.LLMInferenceServiceSpec) {},
		"route-no-scheduler": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Gateway: &v1alpha2.GatewaySpec{}}
		},
		// No scheduler, KEDA down to zero, the activator installed: the
		// workload Service is the activator's to front, the ScaledObject
		// has its trigger, and the route names the service in a header.
		"scale-from-zero": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Gateway: &v1alpha2.GatewaySpec{}}
			s.Scaling = &v1alpha2.ScalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, KEDA: &v1alpha2.DirectKEDAScalingSpec{
				KEDAScalingSpec: v1alpha2.KEDAScalingSpec{IdleReplicaCount: ptr.To[int32](0)},
				Triggers: []v1alpha2.ScaleTrigger{{Type: "prometheus", Metadata: map[string]string{"serverAddress": "http://prom:9090",
					"query": `sum(vllm:num_requests_running{model_name="llama"})`, "threshold": "4"}}}}}
		},
		"route-and-scheduler": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Replicas = ptr.To[int32](2)
			s.Parallelism = &v1alpha2.ParallelismSpec{Tensor: ptr.To[int32](2)}
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Gateway: gateway, Scheduler: &v1alpha2.SchedulerSpec{}}
			s.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resourceQuantity(t, "2")}}}}}
		},
		"tracing": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Tracing = &v1alpha2.TracingSpec{SamplerArg: ptr.To("1.0")}
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
		},
		"scheduler-inline-config": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{Config: &v1alpha2.SchedulerConfigSpec{
				Inline: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"llm-d.ai/v1alpha1","kind":"EndpointPickerConfig","plugins":[{"type":"queue-scorer"}]}`)}}}}
		},
		"lora-adapters": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Model.LoRA = &v1alpha2.LoRASpec{MaxRank: ptr.To[int32](32), Adapters: []v1alpha2.LLMModelSpec{
				{Name: ptr.To("sql"), URI: "hf://org/llama-sql-lora"}, {Name: ptr.To("chat"), URI: "pvc://adapters/chat"}}}
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Gateway: &v1alpha2.GatewaySpec{}, Scheduler: &v1alpha2.SchedulerSpec{}}
		},
		// With ingress.enableLLMInferenceServiceTLS: the presets' TLS flags,
		// probes and the https Service port.
		"tls-route-and-scheduler": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Gateway: &v1alpha2.GatewaySpec{}, Scheduler: &v1alpha2.SchedulerSpec{}}
		},
		// A private bucket: the S3 credentials of the template's
		// ServiceAccount go to the storage initializer (see credentials).
		"s3-model-credentials": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Model.URI = "s3://models/llama"
			s.Template = &corev1.PodSpec{ServiceAccountName: "downloader", Containers: []corev1.Container{{Name: "main"}}}
		},
		// The standalone tokenizer, from the picker's precise prefix-cache
		// scorer, which is split into the tokenizer's pipeline.
		"tokenizer-precise-prefix-cache": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{Config: &v1alpha2.SchedulerConfigSpec{
				Inline: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"llm-d.ai/v1alpha1","kind":"EndpointPickerConfig",` +
					`"plugins":[{"type":"queue-scorer"},{"type":"precise-prefix-cache-scorer","parameters":{"indexerConfig":` +
					`{"tokenizersPoolConfig":{"workers":8},"kvBlockIndexConfig":{"enableMetrics":true}}}},{"type":"prefix-cache-scorer"},{"type":"max-score-picker"}],` +
					`"schedulingProfiles":[{"name":"default","plugins":[{"pluginRef":"queue-scorer","weight":1},` +
					`{"pluginRef":"precise-prefix-cache-scorer","weight":3},{"pluginRef":"prefix-cache-scorer","weight":2},{"pluginRef":"max-score-picker"}]}]}`)}}}}
		},
		// A picker that predicts latencies: the latency predictor's preset
		// adds its training and prediction servers beside the picker.
		"latency-predictor": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{Config: &v1alpha2.SchedulerConfigSpec{
				Inline: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"llm-d.ai/v1alpha1","kind":"EndpointPickerConfig",` +
					`"plugins":[{"type":"predicted-latency-producer"},{"type":"queue-scorer"},{"type":"max-score-picker"}],` +
					`"schedulingProfiles":[{"name":"default","plugins":[{"pluginRef":"queue-scorer","weight":1},{"pluginRef":"max-score-picker"}]}]}`)}}}}
		},
		// A member of a routing group: the route's rules but those under
		// /team/llama split the traffic with another member, by weight.
		"route-group": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{Group: ptr.To("chat"), Weight: ptr.To[int32](90)}, Gateway: &v1alpha2.GatewaySpec{}}
		},
		// The picker's config in the user's ConfigMap: mounted, read by
		// the picker itself.
		"scheduler-config-ref": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{Config: &v1alpha2.SchedulerConfigSpec{
				Ref: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "epp-config"}}}}}
		},
		// Prefill/decode on one node per replica: the decode pods behind
		// the routing sidecar, the prefill Deployment, the picker's P/D
		// profiles.
		"prefill-decode": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
			s.Prefill = &v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](2), Parallelism: &v1alpha2.ParallelismSpec{Tensor: ptr.To[int32](2)}}
		},
		// Each replica a LeaderWorkerSet group of data / dataLocal = 2 pods.
		"worker-data-parallel": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Parallelism = &v1alpha2.ParallelismSpec{Data: ptr.To[int32](16), DataLocal: ptr.To[int32](8), Expert: true, Tensor: ptr.To[int32](1)}
			s.RolloutStrategy = &v1alpha2.RolloutStrategy{MaxSurge: ptr.To(intstr.FromInt32(1))}
		},
		// Pipeline parallelism over a Ray cluster of 2 nodes per replica.
		"worker-pipeline-parallel": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Parallelism = &v1alpha2.ParallelismSpec{Pipeline: ptr.To[int32](2), Tensor: ptr.To[int32](8)}
		},
		// Prefill/decode, both across nodes, each scaled: decode by WVA
		// through an HPA, prefill by WVA through KEDA.
		"prefill-decode-multi-node-wva": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
			dp := &v1alpha2.ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](2)}
			s.Worker, s.Parallelism = &corev1.PodSpec{}, dp
			s.Labels = map[string]string{llmobjects.AcceleratorLabel: "H100"}
			s.Scaling = &v1alpha2.ScalingSpec{MaxReplicas: 4, WVA: &v1alpha2.WVASpec{VariantCost: "20", ActuatorSpec: v1alpha2.ActuatorSpec{HPA: &v1alpha2.HPAScalingSpec{}}}}
			s.Prefill = &v1alpha2.WorkloadSpec{Worker: &corev1.PodSpec{}, Parallelism: dp.DeepCopy(),
				Scaling: &v1alpha2.ScalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, WVA: &v1alpha2.WVASpec{ActuatorSpec: v1alpha2.ActuatorSpec{
					KEDA: &v1alpha2.KEDAScalingSpec{IdleReplicaCount: ptr.To[int32](0), CooldownPeriod: ptr.To[int32](600)}}}}}
		},
		// KEDA on the user's trigger, to zero when idle; KV cache offloaded
		// to CPU, an emptyDir and the user's claim.
		"keda-kv-cache": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Scaling = &v1alpha2.ScalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 5, KEDA: &v1alpha2.DirectKEDAScalingSpec{
				KEDAScalingSpec: v1alpha2.KEDAScalingSpec{IdleReplicaCount: ptr.To[int32](0)},
				Triggers: []v1alpha2.ScaleTrigger{{Type: "prometheus", Metadata: map[string]string{"serverAddress": "http://prom:9090",
					"query": `sum(vllm:num_requests_waiting{model_name="llama"})`, "threshold": "4"}}}}}
			s.KVCacheOffloading = &v1alpha2.KVCacheOffloadingSpec{CPU: resourceQuantity(t, "20Gi"), EvictionPolicy: "arc",
				Secondary: []v1alpha2.SecondaryTierSpec{
					{FileSystem: &v1alpha2.FileSystemTierSpec{EmptyDir: &v1alpha2.EmptyDirTierSpec{Size: resourceQuantity(t, "100Gi")}}},
					{FileSystem: &v1alpha2.FileSystemTierSpec{PVC: &v1alpha2.PVCTierSpec{Ref: &v1alpha2.PVCRefTierSpec{Name: "kv-shared", Path: "llama"}}}}}}
			s.RolloutStrategy = &v1alpha2.RolloutStrategy{MaxUnavailable: ptr.To(intstr.FromString("50%"))}
		},
		// Across nodes with no prefill, scaled by KEDA on the user's
		// trigger: the ScaledObject targets the LeaderWorkerSet.
		"worker-data-parallel-keda": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Parallelism = &v1alpha2.ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](2)}
			s.Scaling = &v1alpha2.ScalingSpec{MaxReplicas: 3, KEDA: &v1alpha2.DirectKEDAScalingSpec{
				Triggers: []v1alpha2.ScaleTrigger{{Type: "cpu", MetricType: "Utilization", Metadata: map[string]string{"value": "60"}}}}}
		},
		// Prefill/decode on one node each, the prefill workload scaled by
		// WVA through an HPA with its behaviour.
		"prefill-decode-hpa": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Prefill = &v1alpha2.WorkloadSpec{Scaling: &v1alpha2.ScalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 6,
				WVA: &v1alpha2.WVASpec{ActuatorSpec: v1alpha2.ActuatorSpec{HPA: &v1alpha2.HPAScalingSpec{Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}}}}}}}
		},
		// spec.labels win on the pods and the selector: a service that
		// names its pods like another's joins that one's InferencePool.
		"labels-join-pool": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Labels = map[string]string{"app.kubernetes.io/name": "shared-llama", "team": "a"}
			s.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
		},
		// The service's Multus, Kueue and Prometheus annotations and its
		// Kueue label reach the Deployment and its pods (metadata below).
		"service-metadata": func(*v1alpha2.LLMInferenceServiceSpec) {},
		// Across nodes they reach the LeaderWorkerSet and both templates,
		// with LeaderWorkerSet's own annotations.
		"service-metadata-multi-node": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Parallelism = &v1alpha2.ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](2)}
		},
		// Managed device allocation (annotations below): the template, and
		// its claim on every model pod, prefill and decode, leader and
		// worker.
		"managed-dra": func(s *v1alpha2.LLMInferenceServiceSpec) {
			dp := &v1alpha2.ParallelismSpec{Data: ptr.To[int32](2), DataLocal: ptr.To[int32](1)}
			s.Prefill = &v1alpha2.WorkloadSpec{Worker: &corev1.PodSpec{}, Parallelism: dp}
		},
		"pvc-model-no-initializer": func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Model.URI = "pvc://models/llama"
			s.StorageInitializer = &v1alpha2.StorageInitializerSpec{Enabled: ptr.To(false)}
		},
	}
	// The service's own labels and annotations, for the cases that set
	// them: those of KServe's prefixes are carried to the workloads, the
	// others are not.
	serviceMetadata := metav1.ObjectMeta{
		Labels: map[string]string{"kueue.x-k8s.io/queue-name": "gpu-queue", "example.com/team": "a"},
		Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": "rdma-net", "prometheus.io/scrape": "true",
			"leaderworkerset.sigs.k8s.io/exclusive-topology": "rack", "example.com/owner": "ml-team"},
	}
	metadata := map[string]metav1.ObjectMeta{"service-metadata": serviceMetadata, "service-metadata-multi-node": serviceMetadata,
		"managed-dra": {Annotations: map[string]string{v1alpha2.DRADeviceClassAnnotation: "gpu.example.com", v1alpha2.DRADeviceCountAnnotation: "2",
			v1alpha2.DRACELSelectorAnnotation: "device.attributes[\"gpu.example.com\"].model == \"H100\"\n\ndevice.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) >= 0"}}}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team", UID: "uid-1",
				Labels: metadata[name].Labels, Annotations: metadata[name].Annotations},
				Spec: v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "hf://meta-llama/Llama-3.1-8B-Instruct"}}}
			change(&svc.Spec)
			v1alpha2.Default(svc)
			tls := strings.HasPrefix(name, "tls-")
			res, err := presets.Combine(context.Background(), svc, src, presets.Global{SystemNamespace: "serval-system",
				IngressGatewayName: "serval-gateway", IngressGatewayNamespace: "serval-system", ModelBasedRoutingHeaderName: "X-Gateway-Model-Name",
				EnableTLS: tls}, []string{"team", "serval-system"})
			require.NoError(t, err)
			in := llmobjects.Inputs{Service: svc, Spec: &res.Spec, Storage: storage.Initializer{Image: "kserve/storage-initializer:v0.20.0"}, TLS: tls}
			if name == "scale-from-zero" {
				in.Activator = "serval-activator.serval-system.svc.cluster.local:9091"
			}
			if sa, ok := llmobjects.DownloadServiceAccount(in); ok && sa == "downloader" {
				in.Credentials = credentials
			}
			if svc.Spec.Router.RoutingGroup() != "" {
				// Another member with a scheduler shares the traffic.
				other := svc.DeepCopy()
				other.Name, other.Spec.Router.Route.Weight = "llama-canary", ptr.To[int32](10)
				other.Spec.Router.Scheduler = &v1alpha2.SchedulerSpec{}
				in.Group, _ = llmobjects.SplitGroup(llmobjects.Member(svc), []llmobjects.GroupMember{llmobjects.Member(svc), llmobjects.Member(other)})
			}
			in.Autoscaling = config.LLMAutoscaling{PrometheusURL: "http://prometheus.monitoring:9090", AuthModes: "bearer", TriggerAuthName: "prom-auth"}
			var objs []apply.Object
			var workloads []*llmobjects.PartWorkload
			for _, p := range llmobjects.Parts(in.Spec) {
				w, err := llmobjects.WorkloadComponent(in, p)
				require.NoError(t, err)
				more, err := llmobjects.WorkloadObjects(in, w)
				require.NoError(t, err)
				objs = append(objs, more...)
				scaling, err := llmobjects.ScalingObjects(in, p)
				require.NoError(t, err)
				objs = append(objs, scaling...)
				workloads = append(workloads, w)
			}
			objs = append(objs, llmobjects.SidecarObjects(in, workloads)...)
			objs = append(objs, llmobjects.DRAObjects(in)...)
			// The certificate is random; its names are checked in TestCertificateNames.
			objs = append(objs, llmobjects.CertificateObject(in, servingcert.Bundle{Key: []byte("<key>"), Cert: []byte("<certificate>")}))
			if llmobjects.HasScheduler(in.Spec) {
				sc, err := llmobjects.SchedulerComponent(in)
				require.NoError(t, err)
				more, err := llmobjects.SchedulerObjects(in, sc)
				require.NoError(t, err)
				objs = append(objs, more...)
			}
			if llmobjects.HasTokenizer(in.Spec) {
				tc, err := llmobjects.TokenizerComponent(in)
				require.NoError(t, err)
				more, err := llmobjects.TokenizerObjects(in, tc)
				require.NoError(t, err)
				objs = append(objs, more...)
			}
			if llmobjects.HasManagedRoute(in) {
				route, err := llmobjects.RouteObject(in)
				require.NoError(t, err)
				objs = append(objs, route)
			}
			golden.Check(t, name, render(t, objs))
		})
	}
}

// credentials are the Secrets of the ServiceAccount "downloader": S3 keys
// and their endpoint, as KServe's users attach them.
var credentials = storage.Credentials{ServiceAccountSecrets: []corev1.Secret{{
	ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Annotations: map[string]string{
		"serving.kserve.io/s3-endpoint": "minio.storage:9000", "serving.kserve.io/s3-usehttps": "0"}},
	Data: map[string][]byte{"AWS_ACCESS_KEY_ID": []byte("id"), "AWS_SECRET_ACCESS_KEY": []byte("secret")},
}}}

func render(t *testing.T, objs []apply.Object) []byte {
	var docs []string
	for _, o := range objs {
		data, err := json.Marshal(o.Spec)
		require.NoError(t, err)
		y, err := yaml.JSONToYAML(data)
		require.NoError(t, err)
		docs = append(docs, "# "+o.String()+"\n"+string(y))
	}
	return []byte(strings.Join(docs, "---\n"))
}

func resourceQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	require.NoError(t, err)
	return q
}
