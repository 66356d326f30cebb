package components

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/runtime"
)

// sklearnRuntime is shaped like KServe's sklearn ClusterServingRuntime.
func sklearnRuntime() runtime.Runtime {
	return runtime.Runtime{Name: "kserve-sklearnserver", Spec: &v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "sklearn", Version: ptr.To("1"), AutoSelect: ptr.To(true), Priority: ptr.To[int32](1)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1, v1beta1.ProtocolV2},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{
			Containers: []corev1.Container{{
				Name: "kserve-container", Image: "kserve/sklearnserver:v0.15.2",
				Args: []string{"--model_name={{.Name}}", "--model_dir=/mnt/models", "--http_port=8080"},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
				},
			}},
			Labels:      map[string]string{"runtime-label": "sklearn", "team": "runtime"},
			Annotations: map[string]string{"prometheus.io/scrape": "true"},
		},
	}}
}

// huggingfaceRuntime has a sidecar, a node selector and no resources.
func huggingfaceRuntime() runtime.Runtime {
	return runtime.Runtime{Name: "kserve-huggingfaceserver", Spec: &v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "huggingface", Version: ptr.To("1"), AutoSelect: ptr.To(true)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1, v1beta1.ProtocolV2},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{
			Containers: []corev1.Container{
				{Name: "kserve-container", Image: "kserve/huggingfaceserver:v0.15.2@sha256:0123456789abcdef",
					Args: []string{"--model_name={{.Name}}", "--model_id={{.Annotations.modelId}}", "--revision={{index .Labels \"model-revision\"}}"}},
				{Name: "metrics-agent", Image: "example.com/agent:1"},
			},
			NodeSelector: map[string]string{"nvidia.com/gpu.present": "true", "pool": "runtime"},
			Tolerations:  []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
		},
	}}
}

// mlserverRuntime is shaped like KServe's kserve-mlserver, whose env reads
// the modelClass label KServe's defaulting sets.
func mlserverRuntime() runtime.Runtime {
	return runtime.Runtime{Name: "kserve-mlserver", Spec: &v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "xgboost", Version: ptr.To("1"), AutoSelect: ptr.To(true), Priority: ptr.To[int32](2)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV2, v1beta1.ProtocolGRPCV2},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
			Name: "kserve-container", Image: "docker.io/seldonio/mlserver:1.6.1",
			Env: []corev1.EnvVar{{Name: "MLSERVER_MODEL_IMPLEMENTATION", Value: "{{.Labels.modelClass}}"}, {Name: "MODELS_DIR", Value: "/mnt/models"}},
		}}},
	}}
}

// torchserveRuntime is shaped like KServe's kserve-torchserve, named
// otherwise and marked by its server-type annotation.
func torchserveRuntime() runtime.Runtime {
	return runtime.Runtime{Name: "team-torchserve", Annotations: map[string]string{v1beta1.ServerTypeAnnotation: "torchserve"},
		Spec: &v1alpha1.ServingRuntimeSpec{
			SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "pytorch", Version: ptr.To("1"), AutoSelect: ptr.To(true), Priority: ptr.To[int32](2)}},
			ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1, v1beta1.ProtocolV2},
			ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
				Name: "kserve-container", Image: "pytorch/torchserve-kfs:0.9.0",
				Args: []string{"torchserve", "--start", "--model-store=/mnt/models/model-store"},
				Env:  []corev1.EnvVar{{Name: "TS_SERVICE_ENVELOPE", Value: "{{.Labels.serviceEnvelope}}"}},
			}}},
		}}
}

func selection(r runtime.Runtime, p v1beta1.Protocol) *runtime.Selection {
	return &runtime.Selection{Runtime: r, Protocol: p}
}

func isvcWith(name string, spec v1beta1.InferenceServiceSpec, opts ...func(*v1beta1.InferenceService)) *v1beta1.InferenceService {
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "models",
		Labels: map[string]string{"team": "isvc"}}, Spec: spec}
	for _, o := range opts {
		o(isvc)
	}
	return isvc
}

func modelSpec(format, uri string) v1beta1.InferenceServiceSpec {
	return v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
		ModelFormat: v1beta1.ModelFormat{Name: format}, PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To(uri)},
	}}}
}

// withExtension sets a component's logger and batcher (raw JSON; "" for none).
func withExtension(spec v1beta1.InferenceServiceSpec, t v1beta1.ComponentType, logger, batcher string) v1beta1.InferenceServiceSpec {
	spec = *spec.DeepCopy()
	ext := spec.Extension(t)
	if logger != "" {
		ext.Logger = &apiextensionsv1.JSON{Raw: []byte(logger)}
	}
	if batcher != "" {
		ext.Batcher = &apiextensionsv1.JSON{Raw: []byte(batcher)}
	}
	return spec
}

func goldenCases() map[string]Inputs {
	cfg := config.Default()
	s3Secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Annotations: map[string]string{
		"serving.serval.dev/s3-endpoint": "minio.storage:9000", "serving.serval.dev/s3-usehttps": "0"}},
		Data: map[string][]byte{"AWS_ACCESS_KEY_ID": nil, "AWS_SECRET_ACCESS_KEY": nil}}
	storageURIs := modelSpec("sklearn", "")
	storageURIs.Predictor.Model.StorageURI = nil
	storageURIs.Predictor.StorageURIs = []v1beta1.StorageURISpec{
		{URI: "gs://models/base", MountPath: "/mnt/models/base"},
		{URI: "s3://models/adapter", MountPath: "/mnt/models/adapters/a"},
		{URI: "pvc://shared/tokenizer", MountPath: "/opt/tokenizer"},
	}
	transformer := modelSpec("sklearn", "gs://models/iris")
	transformer.Transformer = &v1beta1.TransformerSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{
		{Name: "kserve-container", Image: "kserve/image-transformer:v0.15.2"}}}}
	runtimeVersion := modelSpec("sklearn", "gs://models/iris")
	runtimeVersion.Predictor.Model.RuntimeVersion = ptr.To("v0.16.0")
	runtimeVersion.Predictor.Model.Args = []string{"--workers=2"}
	runtimeVersion.Predictor.Model.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}
	custom := v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{
		Name: "kserve-container", Image: "example.com/custom:1",
		Ports: []corev1.ContainerPort{{Name: "h2c", ContainerPort: 8081}}}}}}}
	s3 := modelSpec("sklearn", "s3://bucket/iris")
	s3.Predictor.ServiceAccountName = "models-sa"
	s3.Predictor.Model.Storage = &v1beta1.StorageSpec{StorageKey: ptr.To("minio"), Parameters: &map[string]string{"bucket": "iris"}}
	storageSpec := v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
		ModelFormat: v1beta1.ModelFormat{Name: "sklearn"}, PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{
			Storage: &v1beta1.StorageSpec{StorageKey: ptr.To("minio"), Path: ptr.To("sklearn/iris")}}}}}
	customStorage := v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{
		Name: "kserve-container", Image: "example.com/custom:1", Env: []corev1.EnvVar{{Name: "STORAGE_URI", Value: "gs://models/custom"}}}}}}}
	scraped := isvcWith("scraped", modelSpec("sklearn", "gs://models/iris"), func(i *v1beta1.InferenceService) {
		i.Annotations = map[string]string{v1beta1.PrometheusScrapeAnnotation: "true"}
	})
	modelscopeContainer := v1alpha1.ClusterStorageContainer{ObjectMeta: metav1.ObjectMeta{Name: "modelscope"}, Spec: v1alpha1.StorageContainerSpec{
		Container: corev1.Container{Name: "storage-initializer", Image: "example.com/modelscope-downloader:1",
			Env: []corev1.EnvVar{{Name: "MODELSCOPE_CACHE", Value: "/tmp/modelscope"}}},
		SupportedURIFormats: []v1alpha1.SupportedURIFormat{{Prefix: "modelscope://"}}}}
	return map[string]Inputs{
		"storage-container": {ISVC: isvcWith("qwen", modelSpec("huggingface", "modelscope://qwen/Qwen2.5-0.5B")), Config: cfg,
			Runtime: selection(huggingfaceRuntime(), v1beta1.ProtocolV2), StorageContainers: []v1alpha1.ClusterStorageContainer{modelscopeContainer}},
		"storage-spec": {ISVC: isvcWith("spec", storageSpec), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1),
			StorageConfig: &StorageConfig{Name: "storage-config", Data: map[string][]byte{"minio": []byte(`{"type": "s3", "bucket": "team"}`)}}},
		"custom-storage-uri": {ISVC: isvcWith("custom-storage", customStorage), Config: cfg},
		"mlserver":           {ISVC: isvcWith("xgb", modelSpec("xgboost", "gs://models/xgb")), Config: cfg, Runtime: selection(mlserverRuntime(), v1beta1.ProtocolV2)},
		"torchserve-v2":      {ISVC: isvcWith("torch", modelSpec("pytorch", "gs://models/torch")), Config: cfg, Runtime: selection(torchserveRuntime(), v1beta1.ProtocolV2)},
		"prometheus":         {ISVC: scraped, Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"sklearn-gcs":        {ISVC: isvcWith("iris", modelSpec("sklearn", "gs://models/iris")), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"s3-credentials":     {ISVC: isvcWith("iris-s3", s3), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1), ServiceAccountSecrets: map[string][]corev1.Secret{"models-sa": {s3Secret}}},
		"pvc":                {ISVC: isvcWith("iris-pvc", modelSpec("sklearn", "pvc://models-pvc/sklearn/iris")), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"huggingface": {ISVC: isvcWith("bert", modelSpec("huggingface", "hf://google-bert/bert-base-uncased"), func(i *v1beta1.InferenceService) {
			i.Annotations = map[string]string{"modelId": "bert-base-uncased"}
			i.Labels["model-revision"] = "main"
		}), Config: cfg, Runtime: selection(huggingfaceRuntime(), v1beta1.ProtocolV2)},
		"custom":          {ISVC: isvcWith("custom", custom), Config: cfg},
		"transformer":     {ISVC: isvcWith("with-transformer", transformer), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"runtime-version": {ISVC: isvcWith("pinned", runtimeVersion), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"oci-modelcar": {ISVC: isvcWith("oci", modelSpec("sklearn", "oci://registry.example.com/models/iris:1.0")), Config: cfg,
			Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"oci-native": {ISVC: isvcWith("oci-native", modelSpec("sklearn", "oci+native://registry.example.com/models/iris@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945")),
			Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1), ImageVolumes: ImageVolumes{Supported: true}},
		"oci-fetch": {ISVC: isvcWith("oci-fetch", modelSpec("sklearn", "oci+fetch://registry.example.com/models/iris:1.0")), Config: cfg,
			Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"storage-uris": {ISVC: isvcWith("two-models", storageURIs), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"logger": {ISVC: isvcWith("logged", withExtension(modelSpec("sklearn", "gs://models/iris"), v1beta1.PredictorComponent,
			`{"mode":"request","url":"http://broker.events/logs","metadataHeaders":["X-Request-Id","X-User"],"metadataAnnotations":["team"]}`, ""),
			func(i *v1beta1.InferenceService) { i.Annotations = map[string]string{"team": "fraud"} }),
			Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"batcher-transformer": {ISVC: isvcWith("batched", withExtension(transformer, v1beta1.TransformerComponent, "", `{"maxBatchSize":64}`)),
			Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
		"logger-and-batcher": {ISVC: isvcWith("both", withExtension(withExtension(transformer, v1beta1.PredictorComponent, `{}`, `{"maxBatchSize":16,"maxLatency":100}`),
			v1beta1.TransformerComponent, `{"mode":"response"}`, `{}`)), Config: cfg, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)},
	}
}

// renderComponents is the golden form of a build: each component's name,
// ports and pod template.
func renderComponents(t *testing.T, comps []*Component) []byte {
	t.Helper()
	var out strings.Builder
	for _, c := range comps {
		doc := map[string]any{
			"component": c.Type, "name": c.Name, "mode": c.Mode, "autoscalerClass": c.AutoscalerClass, "ports": c.Ports,
			"template": corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: c.Labels, Annotations: c.Annotations}, Spec: c.Pod},
		}
		data, err := yaml.Marshal(doc)
		require.NoError(t, err)
		out.WriteString("---\n")
		out.Write(data)
	}
	return []byte(out.String())
}

func TestGolden(t *testing.T) {
	for name, in := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			comps, err := Build(in)
			require.NoError(t, err)
			golden.Check(t, name, renderComponents(t, comps))
		})
	}
}
