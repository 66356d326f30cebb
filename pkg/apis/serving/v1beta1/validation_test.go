package v1beta1

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestValidate(t *testing.T) {
	unsupported := &apiextensionsv1.JSON{Raw: []byte(`{}`)}
	keda := func(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }
	tests := []struct {
		name string
		isvc *InferenceService
		mode DeploymentMode
		// want are substrings of the errors, one per expected error, in order.
		want []string
	}{
		{name: "valid sklearn", isvc: makeISVC()},
		{name: "valid custom predictor", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Model = nil
			p.Containers = []corev1.Container{{Name: "kserve-container", Image: "me/model:1"}}
		}))},
		{name: "valid model with an extra container", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Containers = []corev1.Container{{Name: "sidecar", Image: "me/sidecar:1"}}
		}))},
		{name: "uppercase name", isvc: makeISVC(withName("Iris")),
			want: []string{`metadata.name: Invalid value: "Iris": a DNS-1035 label must consist of lower case`}},
		{name: "name too long for the Knative revision", isvc: makeISVC(withName(strings.Repeat("a", 48))),
			want: []string{`the predictor's revision name "` + strings.Repeat("a", 48) + `-predictor-00001" would be 64 characters; names must fit 63, so shorten the name by 1`}},
		{name: "transformer's derived name too long", isvc: makeISVC(withName(strings.Repeat("a", 46)), withTransformer()),
			want: []string{"the transformer's revision name"}},
		{name: "no predictor implementation", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.Model = nil })),
			want: []string{"spec.predictor: Required value: the predictor needs exactly one of model, a framework key"}},
		{name: "model and a framework key", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.SKLearn = &PredictorExtensionSpec{} })),
			want: []string{"found model and sklearn"}},
		{name: "two framework keys", isvc: makeISVC(withLegacySKLearn(), withPredictor(func(p *PredictorSpec) { p.PyTorch = &PredictorExtensionSpec{} })),
			want: []string{"found sklearn and pytorch"}},
		{name: "transformer without containers", isvc: makeISVC(func(i *InferenceService) { i.Spec.Transformer = &TransformerSpec{} }),
			want: []string{"spec.transformer.containers: Required value"}},
		{name: "negative minReplicas", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](-1) })),
			want: []string{"spec.predictor.minReplicas: Invalid value: -1: must be 0 or more"}},
		{name: "maxReplicas below minReplicas", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.MinReplicas = ptr.To[int32](3)
			p.MaxReplicas = 2
		})), want: []string{"spec.predictor.maxReplicas: Invalid value: 2: must be at least minReplicas (3)"}},
		{name: "maxReplicas below the default minReplicas", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.MaxReplicas = 0 }))},
		{name: "scale to zero under HPA", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](0) })),
			want: []string{"scale to zero needs Knative mode"}},
		{name: "scale to zero without an autoscaler", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "none"),
			withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](0) }))},
		{name: "scale to zero in Knative mode", mode: Knative, isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](0) }))},
		{name: "scaleTarget zero", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.ScaleTarget = ptr.To[int32](0) })),
			want: []string{"spec.predictor.scaleTarget: Invalid value: 0: must be at least 1"}},
		{name: "canary in Standard mode", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) }))},
		{name: "a transformer's canary in Standard mode", isvc: makeISVC(withTransformer(), func(i *InferenceService) {
			i.Spec.Transformer.CanaryTrafficPercent = ptr.To[int64](10)
		}), want: []string{"spec.transformer.canaryTrafficPercent: Forbidden: in Standard mode only the predictor splits traffic"}},
		{name: "name too long for the canary revision", isvc: makeISVC(withName(strings.Repeat("a", 47)),
			withPredictor(func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) })),
			want: []string{`the latest revision's Deployment "` + strings.Repeat("a", 47) + `-predictor-canary" would be 64 characters`}},
		{name: "canary in Knative mode", mode: Knative, isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) }))},
		{name: "canary over 100", mode: Knative, isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](101) })),
			want: []string{"must be between 0 and 100"}},
		{name: "rps under HPA", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.ScaleMetric = ptr.To(ScaleMetricRPS) })),
			want: []string{"the hpa autoscaler scales on cpu or memory, not rps"}},
		{name: "cpu under KPA", isvc: makeISVC(withAnnotation(DeploymentModeAnnotation, "Knative"),
			withPredictor(func(p *PredictorSpec) { p.ScaleMetric = ptr.To(ScaleMetricCPU) })),
			want: []string{"the kpa autoscaler scales on concurrency or rps, not cpu"}},
		{name: "deployment strategy in Knative mode", mode: Knative, isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.DeploymentStrategy = &appsv1DeploymentStrategyRecreate
		})), want: []string{"deploymentStrategy applies to Standard mode only"}},
		{name: "unknown deployment mode", isvc: makeISVC(withAnnotation(DeploymentModeAnnotation, "Sideways")),
			want: []string{`Unsupported value: "Sideways"`}},
		{name: "legacy mode value is accepted", isvc: makeISVC(withAnnotation(DeploymentModeAnnotation, "RawDeployment"))},
		{name: "keda in Knative mode", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withAnnotation(DeploymentModeAnnotation, "Knative")),
			want: []string{"metadata.annotations[serving.serval.dev/autoscalerClass]: Forbidden: autoscalerClass keda scales a Deployment: it needs Standard mode (Knative scales its own)"}},
		{name: "keda scales to zero", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.MinReplicas = ptr.To[int32](0)
			p.AutoScaling = keda(`{"metrics":[{"type":"External","external":{"metric":{"backend":"prometheus","serverAddress":"http://prom:9090","query":"sum(rate(x[1m]))"},"target":{"type":"Value","value":"2"}}}]}`)
		}))},
		{name: "autoScaling metrics that are incomplete", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrics":[{"type":"Resource","resource":{"name":"gpu","target":{"type":"Utilization"}}},` +
				`{"type":"External","external":{"metric":{"backend":"datadog"},"target":{"type":"Value"}}},{"type":"PodMetric"},{"type":"Queue"}]}`)
		})), want: []string{
			`spec.predictor.autoScaling.metrics[0].resource.name: Unsupported value: "gpu": supported values: "cpu", "memory"`,
			"spec.predictor.autoScaling.metrics[0].resource.target.averageUtilization: Required value: a Utilization target needs averageUtilization of 1 or more (percent)",
			`spec.predictor.autoScaling.metrics[1].external.metric.backend: Unsupported value: "datadog": supported values: "prometheus", "graphite"`,
			"spec.predictor.autoScaling.metrics[1].external.metric.serverAddress: Required value: the metrics backend's address",
			"spec.predictor.autoScaling.metrics[1].external.metric.query: Required value: the query whose value is scaled on",
			"spec.predictor.autoScaling.metrics[1].external.target.value: Required value: a Value target needs value",
			"spec.predictor.autoScaling.metrics[2].podmetric: Required value: a PodMetric metric needs podmetric",
			`spec.predictor.autoScaling.metrics[3].type: Unsupported value: "Queue": supported values: "Resource", "External", "PodMetric"`,
		}},
		{name: "an HPA cpu target over 100 percent", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.ScaleTarget = ptr.To[int32](100000) })),
			want: []string{"spec.predictor.scaleTarget: Invalid value: 100000: the target utilization percentage should be a [1-100] integer"}},
		{name: "an HPA memory target over 100 MiB", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.ScaleMetric, p.ScaleTarget = ptr.To(ScaleMetricMemory), ptr.To[int32](512)
		}))},
		{name: "a Knative concurrency target over 100", mode: Knative, isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.ScaleTarget = ptr.To[int32](500) }))},
		{name: "KEDA targets out of range", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":150}}},` +
				`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"512Ki"}}},` +
				`{"type":"External","external":{"metric":{"serverAddress":"http://prom:9090","query":"q"},"target":{"type":"Value","value":"-10"}}},` +
				`{"type":"PodMetric","podmetric":{"metric":{"query":"q"},"target":{"type":"AverageValue","averageValue":"0"}}}]}`)
		})), want: []string{
			"spec.predictor.autoScaling.metrics[0].resource.target.averageUtilization: Invalid value: 150: the target utilization percentage should be a [1-100] integer",
			`spec.predictor.autoScaling.metrics[1].resource.target.averageValue: Invalid value: "512Ki": the memory target value should be greater than 1 MiB`,
			`spec.predictor.autoScaling.metrics[2].external.target.value: Invalid value: "-10": must be greater than 0: KEDA scales to hold the metric at this value`,
			`spec.predictor.autoScaling.metrics[3].podmetric.target.averageValue: Invalid value: "0": must be greater than 0: KEDA scales to hold the metric's average per pod at this value`,
		}},
		{name: "autoScaling that does not decode", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrcs":[]}`)
		})), want: []string{`spec.predictor.autoScaling: Invalid value: does not decode: metrcs: unknown field; check its spelling and indentation`}},
		{name: "autoScaling with a misspelt field deep inside: its path", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilisation":50}}}]}`)
		})), want: []string{`spec.predictor.autoScaling: Invalid value: does not decode: metrics[0].resource.target.averageUtilisation: unknown field`}},
		{name: "autoScaling with a value of the wrong type deep inside: its path", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "keda"), withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":"lots"}}}]}`)
		})), want: []string{`spec.predictor.autoScaling: Invalid value: does not decode: metrics[0].resource.target.averageUtilization: must be a whole number, not a string`}},
		{name: "unknown autoscaler", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "magic")),
			want: []string{`Unsupported value: "magic"`}},
		{name: "logger and batcher", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Logger = keda(`{"mode":"all","url":"http://broker.default","metadataHeaders":["X-Request-Id"]}`)
			p.Batcher = keda(`{"maxBatchSize":32,"maxLatency":500}`)
		}))},
		{name: "a logger with a bad mode and URL", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.Logger = keda(`{"mode":"everything","url":"broker"}`) })),
			want: []string{`spec.predictor.logger.mode: Unsupported value: "everything": supported values: "all", "request", "response"`,
				`spec.predictor.logger.url: Invalid value: "broker": not an absolute URL`}},
		{name: "a batcher that does not decode", isvc: makeISVC(withTransformer(), func(i *InferenceService) { i.Spec.Transformer.Batcher = keda(`{"maxBatchSize":"32"}`) }),
			want: []string{"spec.transformer.batcher: Invalid value: does not decode: maxBatchSize: must be a whole number, not a string"}},
		{name: "a batcher of size 0", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.Batcher = keda(`{"maxBatchSize":0}`) })),
			want: []string{"spec.predictor.batcher.maxBatchSize: Invalid value: 0: must be at least 1"}},
		{name: "a logger in Knative mode", isvc: makeISVC(withAnnotation(DeploymentModeAnnotation, "Knative"), withPredictor(func(p *PredictorSpec) { p.Logger = unsupported }))},
		{name: "autoScaling under an HPA", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.AutoScaling = unsupported }))},
		{name: "autoScaling without an autoscaler", isvc: makeISVC(withAnnotation(AutoscalerClassAnnotation, "none"), withPredictor(func(p *PredictorSpec) { p.AutoScaling = unsupported })),
			want: []string{"spec.predictor.autoScaling: Forbidden: autoScaling takes effect with autoscalerClass keda or hpa, not none"}},
		{name: "an External metric under an HPA", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.AutoScaling = keda(`{"metrics":[{"type":"External","external":{"metric":{"serverAddress":"http://prom:9090","query":"q"},"target":{"type":"Value","value":"2"}}}]}`)
		})), want: []string{"spec.predictor.autoScaling.metrics[0].type: Forbidden: an HPA scales on Resource metrics (cpu, memory); an External metric needs autoscalerClass keda"}},
		{name: "a multi-node predictor on a claim, no autoscaler", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.WorkerSpec = rawJSON(`{"pipelineParallelSize":2,"tensorParallelSize":1,"containers":[{"name":"worker-container","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}`)
			p.Model.StorageURI = ptr.To("pvc://models/llama")
		}), withAnnotation(AutoscalerClassAnnotation, "none"))},
		{name: "a multi-node predictor breaking KServe's rules", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.WorkerSpec = rawJSON(`{"pipelineParallelSize":0,"containers":[{"name":"a","resources":{"limits":{"example.com/tpu":"1"}}},{"name":"b"}]}`)
			p.Model.Env = []corev1.EnvVar{{Name: "TENSOR_PARALLEL_SIZE", Value: "2"}}
		})), want: []string{
			"spec.predictor.workerSpec.containers: Too many: 2: must have at most 1 item",
			"spec.predictor.workerSpec.pipelineParallelSize: Invalid value: 0: pipelineParallelSize cannot be less than 1",
			`spec.predictor.workerSpec.containers[0].resources: Invalid value: "example.com/tpu": not a GPU resource Serval knows`,
			"spec.predictor.model.env: Forbidden: TENSOR_PARALLEL_SIZE is set by Serval from workerSpec",
			`spec.predictor.model.storageUri: Invalid value: "gs://models/iris": a multi-node predictor mounts its model on every node: use pvc:// or oci://, not gs://`,
			`metadata.annotations[serving.serval.dev/autoscalerClass]: Invalid value: "": a multi-node predictor runs a fixed number of nodes: set the autoscaler class to none`,
		}},
		{name: "a multi-node predictor in Knative mode, a custom GPU", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.WorkerSpec = rawJSON(`{"containers":[{"name":"w","resources":{"limits":{"example.com/tpu":"1"}}}]}`)
			p.Model.StorageURI = ptr.To("oci://registry/llama:1")
		}), withAnnotation(AutoscalerClassAnnotation, "none"), withAnnotation(GPUResourceTypesAnnotation, `["example.com/tpu"]`)),
			mode: Knative, want: []string{"spec.predictor.workerSpec: Forbidden: a multi-node predictor runs in Standard mode"}},
		{name: "a percent without the sign", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.DeploymentStrategy = &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("0"))}}
		})), want: []string{`spec.predictor.deploymentStrategy.rollingUpdate.maxUnavailable: Invalid value: "0": must be a count (0, 1, ...) or a percent such as "25%"`}},
		{name: "nothing may surge nor be unavailable", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.DeploymentStrategy = &appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromString("0%"))}}
		})), want: []string{"spec.predictor.deploymentStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0 too"}},
		{name: "a container name with a trailing space", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Model = nil
			p.Containers = []corev1.Container{{Name: "kserve-container ", Image: "i"}}
		})), want: []string{`spec.predictor.containers[0].name: Invalid value: "kserve-container ": a lowercase RFC 1123 label`}},
		{name: "a transformer container named like a Go identifier", isvc: makeISVC(withTransformer(), func(i *InferenceService) {
			i.Spec.Transformer.Containers[0].Name = "Bad_Name!"
		}), want: []string{`spec.transformer.containers[0].name: Invalid value: "Bad_Name!"`}},
		{name: "storageUris with storageUri", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.StorageURIs = []StorageURISpec{{URI: "gs://b/m", MountPath: "/mnt/models/a"}}
		})), want: []string{"spec.predictor.storageUris: Invalid value: 1: storageUris and model.storageUri (or model.storage) are exclusive: list every model in storageUris"}},
		{name: "ART explainer", isvc: makeISVC(func(i *InferenceService) {
			i.Spec.Explainer = &ExplainerSpec{ART: unsupported, PodSpec: PodSpec{Containers: []corev1.Container{{Name: "e"}}}}
		}), want: []string{"spec.explainer.art is not supported by Serval yet"}},
		{name: "empty runtime name", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.Model.Runtime = ptr.To("") })),
			want: []string{"spec.predictor.model.runtime: Invalid value"}},
		{name: "storageUri and storage.key", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Model.Storage = &StorageSpec{StorageKey: ptr.To("s3")}
		})), want: []string{"set either storageUri or storage.key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.isvc, ValidationOptions{DefaultDeploymentMode: tt.mode})
			if !assert.Len(t, errs, len(tt.want), "errors: %v", errs) {
				return
			}
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	longName := strings.Repeat("a", 48)
	tests := []struct {
		name     string
		old, new *InferenceService
		want     []string
	}{
		{
			name: "an old broken rule does not block an unrelated update (ratcheting)",
			old:  makeISVC(withName(longName)),
			new:  makeISVC(withName(longName), withAnnotation("team", "a")),
		},
		{
			name: "a new broken rule blocks the update",
			old:  makeISVC(withName(longName)),
			new: makeISVC(withName(longName), withPredictor(func(p *PredictorSpec) {
				p.MinReplicas = ptr.To[int32](-1)
			})),
			want: []string{"minReplicas"},
		},
		{
			name: "the mode cannot change once deployed",
			old:  makeISVC(func(i *InferenceService) { i.Status.DeploymentMode = Standard }),
			new:  makeISVC(withAnnotation(DeploymentModeAnnotation, "Knative")),
			want: []string{"cannot change from Standard to Knative once deployed"},
		},
		{
			name: "an alias of the deployed mode is no change",
			old:  makeISVC(func(i *InferenceService) { i.Status.DeploymentMode = "RawDeployment" }),
			new:  makeISVC(withAnnotation(DeploymentModeAnnotation, "Standard")),
		},
		{
			name: "the mode may change before it is deployed",
			old:  makeISVC(),
			new:  makeISVC(withAnnotation(DeploymentModeAnnotation, "Knative")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateUpdate(tt.old, tt.new, ValidationOptions{})
			if !assert.Len(t, errs, len(tt.want), "errors: %v", errs) {
				return
			}
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestNormalizeDeploymentMode(t *testing.T) {
	for in, want := range map[string]DeploymentMode{
		"Standard": Standard, "standard": Standard, "RawDeployment": Standard,
		"Knative": Knative, "Serverless": Knative, "serverless": Knative,
	} {
		got, ok := NormalizeDeploymentMode(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := NormalizeDeploymentMode("ModelMesh")
	assert.False(t, ok)
}

// TestValidateAgainstTheDeployedMode: once deployed, the mode in status is the
// one the rules apply to, whatever the annotation says.
func TestValidateAgainstTheDeployedMode(t *testing.T) {
	isvc := makeISVC(withAnnotation(DeploymentModeAnnotation, "Standard"),
		withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](0) }))
	assert.NotEmpty(t, Validate(isvc, ValidationOptions{}), "Standard mode's HPA rejects scale to zero")
	assert.Empty(t, Validate(isvc, ValidationOptions{DeployedMode: Knative}), "the deployed Knative mode allows it")
}
