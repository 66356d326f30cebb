package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// poolSpec is a spec's router with a scheduler whose pool spec is the
// flow mapping body given.
func poolSpec(body string) string {
	return "  router:\n    scheduler:\n      pool:\n        spec: {" + body + "}\n"
}

func llmYAML(kind, name, spec string) string {
	return "apiVersion: serving.serval.dev/v1alpha2\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: default\nspec:\n" + spec
}

// TestLLMInferenceServiceAdmission: a valid service is admitted with
// KServe's defaults; bad ones, and the fields Serval does not implement yet,
// are refused with their messages; presets are checked as parts of a spec.
func TestLLMInferenceServiceAdmission(t *testing.T) {
	require.NoError(t, create(llmYAML("LLMInferenceService", "facebook-opt", `  model:
    uri: hf://facebook/opt-125m
  replicas: 2
  router:
    route: {}
    gateway: {}
    scheduler: {}
  template:
    containers:
    - name: main
      resources:
        limits: {cpu: "4", memory: 8Gi}
`)), "a valid service is admitted")
	got := &v1alpha2.LLMInferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "facebook-opt"}, got))
	assert.Equal(t, "facebook-opt", *got.Spec.Model.Name, "the model is named after the service")
	assert.Equal(t, "8Gi", got.Spec.Template.Containers[0].Resources.Limits.Memory().String())

	tests := []struct{ name, kind, spec, want string }{
		{"no model", "LLMInferenceService", "  replicas: 1\n",
			"spec.model.uri: Required value: the model's storage URI is required"},
		{"a model URI the storage initializer cannot fetch", "LLMInferenceService", "  model: {uri: ftp://models/llama}\n",
			`spec.model.uri: Invalid value: "ftp://models/llama": storageUri scheme "ftp" is not supported`},
		{"a preset's model URI likewise", "LLMInferenceServiceConfig", "  model: {uri: ftp://models/llama}\n",
			`spec.model.uri: Invalid value: "ftp://models/llama": storageUri scheme "ftp" is not supported`},
		{"a worker without parallelism across nodes", "LLMInferenceService", "  model: {uri: hf://org/m}\n  worker: {containers: [{name: main}]}\n",
			"spec.worker: Invalid value: \"set\": a worker runs each replica across nodes: set spec.parallelism to data parallelism"},
		{"scaling beside replicas", "LLMInferenceService", "  model: {uri: hf://org/m}\n  replicas: 2\n  scaling: {maxReplicas: 3, wva: {hpa: {}}}\n",
			"spec.scaling: Invalid value: \"set\": scaling and spec.replicas are mutually exclusive"},
		{"KEDA without triggers", "LLMInferenceService", "  model: {uri: hf://org/m}\n  scaling: {maxReplicas: 3, keda: {triggers: []}}\n",
			"spec.scaling.keda.triggers: Required value: at least one trigger is required"},
		{"a routing group without its weight", "LLMInferenceService", "  model: {uri: hf://org/m}\n  router: {route: {group: chat}}\n",
			"spec.router.route.weight: Required value: group requires weight"},
		{"an Ingress that is not named", "LLMInferenceService", "  model: {uri: hf://org/m}\n  router: {ingress: {}}\n",
			"spec.router.ingress.refs: Required value: router.ingress names your own Ingresses"},
		{"an unknown field in the pod template", "LLMInferenceService", "  model: {uri: hf://org/m}\n  template:\n    containers:\n    - name: main\n      imagee: vllm\n",
			"spec.template.containers[0].imagee: Forbidden: unknown field; check its spelling and indentation"},
		{"a quantity that does not parse", "LLMInferenceService", "  model: {uri: hf://org/m}\n  template:\n    containers:\n    - name: main\n      resources: {limits: {cpu: lots}}\n",
			"spec.template.containers[0].resources.limits.cpu"},
		{"a preset with an adapter without a name", "LLMInferenceServiceConfig", "  model:\n    lora:\n      adapters: [{uri: hf://org/a}]\n",
			"spec.model.lora.adapters[0].name: Required value: every adapter needs a name"},
		{"a preset naming presets (KServe's refusal)", "LLMInferenceServiceConfig", "  baseRefs: [{name: other}]\n",
			"spec.baseRefs: Forbidden: baseRefs is not a permitted field in LLMInferenceServiceConfig, support for recursive refs has been disabled"},
		{"a preset's pool without an endpoint picker", "LLMInferenceServiceConfig", poolSpec("selector: {matchLabels: {app: m}}, targetPorts: [{number: 8000}]"),
			"spec.router.scheduler.pool.spec.endpointPickerRef.name: Required value"},
		{"a preset's pool without a selector", "LLMInferenceServiceConfig", poolSpec("targetPorts: [{number: 8000}], endpointPickerRef: {name: epp, port: {number: 9002}}"),
			"spec.router.scheduler.pool.spec.selector.matchLabels: Required value"},
		{"a preset's pool without target ports", "LLMInferenceServiceConfig", poolSpec("selector: {matchLabels: {app: m}}, endpointPickerRef: {name: epp, port: {number: 9002}}"),
			"spec.router.scheduler.pool.spec.targetPorts: Required value"},
		{"a service's pool with a port twice", "LLMInferenceService", "  model: {uri: hf://org/m}\n" +
			poolSpec("selector: {matchLabels: {app: m}}, targetPorts: [{number: 8000}, {number: 8000}], endpointPickerRef: {name: epp, port: {number: 9002}}"),
			"spec.router.scheduler.pool.spec.targetPorts[1].number: Duplicate value: 8000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(llmYAML(tt.kind, "bad", tt.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// Managed device allocation's annotations, KServe's rules.
	dra := func(annotations string) string {
		return strings.Replace(llmYAML("LLMInferenceService", "dra", "  model: {uri: hf://org/m}\n"),
			"metadata:\n", "metadata:\n  annotations: {"+annotations+"}\n", 1)
	}
	for _, tt := range []struct{ name, annotations, want string }{
		{"a device count without a device class", `serving.serval.dev/exp-dra-device-count: "2"`,
			"metadata.annotations[serving.serval.dev/exp-dra-device-class]: Required value: serving.serval.dev/exp-dra-device-class is required to enable managed DRA"},
		{"a device count of zero", `serving.serval.dev/exp-dra-device-class: gpu.example.com, serving.serval.dev/exp-dra-device-count: "0"`,
			"the device count is a whole number of at least 1"},
		{"a device class that is no DNS name", `serving.serval.dev/exp-dra-device-class: "GPU Class"`, "device class must be a DNS subdomain"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := create(dra(tt.annotations))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	require.NoError(t, create(llmYAML("LLMInferenceServiceConfig", "my-preset", `  model:
    name: "{{ .ObjectMeta.Name }}-served"
  template:
    containers:
    - name: main
      args: ["--max-model-len", "4096"]
`)), "a preset with templates is admitted")
}
