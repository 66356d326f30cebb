package presets

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// source is an in-memory Source: the service's namespace's presets first,
// then Serval's.
type source struct {
	local, system map[string]v1alpha2.LLMInferenceServiceSpec
}

func (s source) Config(_ context.Context, name string) (*v1alpha2.LLMInferenceServiceConfig, error) {
	if spec, ok := s.local[name]; ok {
		return &v1alpha2.LLMInferenceServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}, Spec: spec}, nil
	}
	if spec, ok := s.system[name]; ok {
		return &v1alpha2.LLMInferenceServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "serval-system"}, Spec: spec}, nil
	}
	return nil, nil
}

func container(name, image string, args ...string) corev1.Container {
	return corev1.Container{Name: name, Image: image, Args: args}
}

// presetsForTest are small stand-ins of the well-known presets.
func presetsForTest() map[string]v1alpha2.LLMInferenceServiceSpec {
	return map[string]v1alpha2.LLMInferenceServiceSpec{
		Template: {WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](60),
			Containers: []corev1.Container{{Name: "main", Image: "vllm:1", Args: []string{"--served-model-name", "{{ .Spec.Model.Name }}",
				"--shutdown-timeout", "{{ shutdownTimeout .Spec.Template 15 }}"},
				Env: []corev1.EnvVar{{Name: "HOME", Value: "/home"}, {Name: "LEVEL", Value: "INFO"}}}}}}},
		Scheduler: {Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Pool: &v1alpha2.InferencePoolSpec{Spec: &igwapi.InferencePoolSpec{
				EndpointPickerRef: &igwapi.EndpointPickerRef{Kind: "Service", Name: "{{ ChildName .ObjectMeta.Name `-epp-service` }}"}}},
			Template: &corev1.PodSpec{Containers: []corev1.Container{container("main", "epp:1", "--pool-name", "{{ ChildName .ObjectMeta.Name `-inference-pool` }}")}}}}},
		RouterRoute: {Router: &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{HTTP: &v1alpha2.HTTPRouteSpec{Spec: &gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "{{ .GlobalConfig.IngressGatewayName }}"}}},
			Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
				Group: ptr.To[gwapiv1.Group]("inference.networking.k8s.io"), Kind: ptr.To[gwapiv1.Kind]("InferencePool"),
				Name: "{{ ChildName .ObjectMeta.Name `-inference-pool` }}", Port: ptr.To[gwapiv1.PortNumber](8000)}}}}}},
		}}}}},
		Tracing: {Tracing: &v1alpha2.TracingSpec{ExporterEndpoint: ptr.To("http://otel-collector:4317"), SamplerArg: ptr.To("0.05")}},
	}
}

func svcWith(change func(*v1alpha2.LLMInferenceServiceSpec)) *v1alpha2.LLMInferenceService {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"},
		Spec: v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "hf://meta/llama"}}}
	if change != nil {
		change(&svc.Spec)
	}
	v1alpha2.Default(svc)
	return svc
}

func TestWellKnown(t *testing.T) {
	inline := func(plugins string) *v1alpha2.SchedulerConfigSpec {
		return &v1alpha2.SchedulerConfigSpec{Inline: &runtime.RawExtension{Raw: []byte(`{"plugins":[` + plugins + `]}`)}}
	}
	tests := []struct {
		name string
		spec v1alpha2.LLMInferenceServiceSpec
		want []string
	}{
		{"a model alone", v1alpha2.LLMInferenceServiceSpec{}, []string{Template}},
		{"route and scheduler", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{},
			Scheduler: &v1alpha2.SchedulerSpec{}}}, []string{Scheduler, RouterRoute, Template}},
		{"the user's own pool and routes", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{
			Route:     &v1alpha2.GatewayRoutesSpec{HTTP: &v1alpha2.HTTPRouteSpec{Refs: []corev1.LocalObjectReference{{Name: "mine"}}}},
			Scheduler: &v1alpha2.SchedulerSpec{Pool: &v1alpha2.InferencePoolSpec{Ref: &corev1.LocalObjectReference{Name: "pool"}}}}}, []string{Template}},
		{"a tokenizer by plugin", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Config: inline(`{"type":"token-producer"}`)}}}, []string{Scheduler, Tokenizer, Template}},
		{"no tokenizer for other plugins", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Config: inline(`{"type":"queue-scorer"}`)}}}, []string{Scheduler, Template}},
		{"the latency predictor by plugin, after the tokenizer", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{},
			Scheduler: &v1alpha2.SchedulerSpec{Config: inline(`{"type":"predicted-latency-producer"},{"type":"token-producer"}`)}}},
			[]string{Scheduler, Tokenizer, SchedulerLatencyPredictor, RouterRoute, Template}},
		{"tracing", v1alpha2.LLMInferenceServiceSpec{Tracing: &v1alpha2.TracingSpec{}}, []string{Tracing, Template}},
		{"prefill and decode", v1alpha2.LLMInferenceServiceSpec{Prefill: &v1alpha2.WorkloadSpec{}}, []string{PrefillTemplate, DecodeTemplate}},
		{"data parallel workers", v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Worker: &corev1.PodSpec{},
			Parallelism: &v1alpha2.ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](2)}}}, []string{WorkerDataParallel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, WellKnown(&tt.spec)) })
	}
}

func TestMerge(t *testing.T) {
	base := v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](1), Template: &corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Image: "vllm:1", Args: []string{"--a"}, Env: []corev1.EnvVar{{Name: "HOME", Value: "/home"}}}},
		Volumes:    []corev1.Volume{{Name: "home"}}}}}
	over := v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](3), Template: &corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Args: []string{"--b"}, Env: []corev1.EnvVar{{Name: "LEVEL", Value: "DEBUG"}}},
			{Name: "sidecar", Image: "proxy:1"}},
		NodeSelector: map[string]string{"gpu": "a100"}}}}
	got, err := Merge(base, over)
	require.NoError(t, err)
	assert.Equal(t, int32(3), *got.Replicas, "a scalar is replaced")
	require.Len(t, got.Template.Containers, 2, "containers merge by name")
	main := got.Template.Containers[0]
	assert.Equal(t, "vllm:1", main.Image, "a field the override leaves out is kept")
	assert.Equal(t, []string{"--b"}, main.Args, "a list of strings is replaced whole")
	assert.Equal(t, []corev1.EnvVar{{Name: "LEVEL", Value: "DEBUG"}, {Name: "HOME", Value: "/home"}}, main.Env, "env merges by name")
	assert.Equal(t, "proxy:1", got.Template.Containers[1].Image)
	assert.Equal(t, []corev1.Volume{{Name: "home"}}, got.Template.Volumes, "a list the override leaves out is kept")
	assert.Equal(t, map[string]string{"gpu": "a100"}, got.Template.NodeSelector)

	onlyPodFields := v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{ServiceAccountName: "sa"}}}
	got, err = Merge(base, onlyPodFields)
	require.NoError(t, err)
	assert.Equal(t, "sa", got.Template.ServiceAccountName)
	assert.Len(t, got.Template.Containers, 1, "a template without containers keeps the base's")
}

func TestCombine(t *testing.T) {
	g := Global{SystemNamespace: "serval-system", IngressGatewayName: "serval-gateway", IngressGatewayNamespace: "serval-system"}
	ns := []string{"team", "serval-system"}
	t.Run("order: well-known, baseRefs, the service", func(t *testing.T) {
		src := source{system: presetsForTest(), local: map[string]v1alpha2.LLMInferenceServiceSpec{
			"big-gpu": {WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](2), Template: &corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "vllm:big"}}}}},
			"debug": {WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](4), Template: &corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "LEVEL", Value: "DEBUG"}}}}}}},
		}}
		svc := svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.BaseRefs = []corev1.LocalObjectReference{{Name: "big-gpu"}, {Name: "debug"}}
			s.Replicas = ptr.To[int32](5)
		})
		res, err := Combine(context.Background(), svc, src, g, ns)
		require.NoError(t, err)
		assert.Equal(t, []v1alpha2.AppliedConfigRef{
			{Name: Template, Namespace: "serval-system", Source: v1alpha2.AppliedConfigSourcePreset},
			{Name: "big-gpu", Namespace: "team", Source: v1alpha2.AppliedConfigSourceUserRef},
			{Name: "debug", Namespace: "team", Source: v1alpha2.AppliedConfigSourceUserRef},
		}, res.Applied)
		main := res.Spec.Template.Containers[0]
		assert.Equal(t, int32(5), *res.Spec.Replicas, "the service's own spec wins")
		assert.Equal(t, "vllm:big", main.Image, "a later baseRef wins over the preset")
		assert.Equal(t, []string{"--served-model-name", "llama", "--shutdown-timeout", "40"}, main.Args, "templates render over the service")
		assert.Equal(t, []corev1.EnvVar{{Name: "HOME", Value: "/home"}, {Name: "LEVEL", Value: "DEBUG"}}, main.Env, "a variable is replaced in place")
	})
	t.Run("a namespace's own preset of a well-known name wins", func(t *testing.T) {
		src := source{system: presetsForTest(), local: map[string]v1alpha2.LLMInferenceServiceSpec{
			Template: {WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "team-vllm:1"}}}}}}}
		res, err := Combine(context.Background(), svcWith(nil), src, g, ns)
		require.NoError(t, err)
		assert.Equal(t, "team-vllm:1", res.Spec.Template.Containers[0].Image)
		assert.Equal(t, "team", res.Applied[0].Namespace)
	})
	t.Run("route and scheduler settle their references", func(t *testing.T) {
		svc := svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}, Scheduler: &v1alpha2.SchedulerSpec{}}
		})
		res, err := Combine(context.Background(), svc, source{system: presetsForTest()}, g, ns)
		require.NoError(t, err)
		route := res.Spec.Router.Route.HTTP.Spec
		assert.Equal(t, gwapiv1.ObjectName("serval-gateway"), route.ParentRefs[0].Name, "GlobalConfig renders")
		backend := route.Rules[0].BackendRefs[0]
		assert.Equal(t, gwapiv1.ObjectName("llama-inference-pool"), backend.Name)
		pool := res.Spec.Router.Scheduler.Pool.Spec
		assert.Equal(t, map[igwapi.LabelKey]igwapi.LabelValue{"app.kubernetes.io/name": "llama",
			"app.kubernetes.io/part-of": "llminferenceservice", "serving.serval.dev/component": "workload"}, pool.Selector.MatchLabels,
			"the pool selects the model pods")
		assert.Equal(t, igwapi.ObjectName("llama-epp-service"), pool.EndpointPickerRef.Name)
		assert.Equal(t, int32(9002), int32(pool.EndpointPickerRef.Port.Number), "the picker's port")
		assert.Equal(t, "llama-epp-sa", res.Spec.Router.Scheduler.Template.ServiceAccountName)
		assert.Equal(t, []string{"--pool-name", "llama-inference-pool"}, res.Spec.Router.Scheduler.Template.Containers[0].Args)
	})
	t.Run("without a scheduler the route goes to the workload's Service", func(t *testing.T) {
		svc := svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{},
				Gateway: &v1alpha2.GatewaySpec{Refs: []v1alpha2.GatewayObjectReference{{UntypedObjectReference: v1alpha2.UntypedObjectReference{Name: "mine", Namespace: "infra"}}}}}
		})
		res, err := Combine(context.Background(), svc, source{system: presetsForTest()}, g, ns)
		require.NoError(t, err)
		route := res.Spec.Router.Route.HTTP.Spec
		b := route.Rules[0].BackendRefs[0]
		assert.Equal(t, "Service", string(*b.Kind))
		assert.Equal(t, "", string(*b.Group))
		assert.Equal(t, gwapiv1.ObjectName("llama-kserve-workload-svc"), b.Name)
		assert.Equal(t, gwapiv1.ObjectName("mine"), route.ParentRefs[0].Name, "router.gateway's refs are the route's parents")
		assert.Equal(t, gwapiv1.Namespace("infra"), *route.ParentRefs[0].Namespace)
	})
	t.Run("the user's own pool", func(t *testing.T) {
		svc := svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{},
				Scheduler: &v1alpha2.SchedulerSpec{Pool: &v1alpha2.InferencePoolSpec{Ref: &corev1.LocalObjectReference{Name: "shared-pool"}}}}
		})
		res, err := Combine(context.Background(), svc, source{system: presetsForTest()}, g, ns)
		require.NoError(t, err)
		assert.Equal(t, gwapiv1.ObjectName("shared-pool"), res.Spec.Router.Route.HTTP.Spec.Rules[0].BackendRefs[0].Name)
		assert.NotContains(t, res.Applied, v1alpha2.AppliedConfigRef{Name: Scheduler, Namespace: "serval-system", Source: v1alpha2.AppliedConfigSourcePreset})
	})
	t.Run("errors name the preset", func(t *testing.T) {
		_, err := Combine(context.Background(), svcWith(nil), source{}, g, ns)
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		assert.EqualError(t, err, "LLMInferenceServiceConfig serval-config-llm-template is not in namespace team or serval-system")

		_, err = Combine(context.Background(), svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.BaseRefs = []corev1.LocalObjectReference{{Name: "missing"}}
		}), source{system: presetsForTest()}, g, ns)
		assert.EqualError(t, err, "LLMInferenceServiceConfig missing is not in namespace team or serval-system")

		broken := presetsForTest()
		broken["broken"] = v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{Name: ptr.To("{{ .Spec.NoSuchField }}")}}
		_, err = Combine(context.Background(), svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.BaseRefs = []corev1.LocalObjectReference{{Name: "broken"}}
		}), source{system: broken}, g, ns)
		var pe *PresetError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "broken", pe.Name)
		assert.Contains(t, err.Error(), `map has no entry for key "NoSuchField"`)
	})
	t.Run("a template past a bound fails the preset, not the process", func(t *testing.T) {
		bomb := presetsForTest()
		bomb["bomb"] = v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Env: []corev1.EnvVar{{Name: "X", Value: "{{ range 20000000 }}aaaaaaaaaa{{ end }}"}}}}}}}
		_, err := Combine(context.Background(), svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.BaseRefs = []corev1.LocalObjectReference{{Name: "bomb"}}
		}), source{system: bomb}, g, ns)
		var limit *strtemplate.LimitError
		require.ErrorAs(t, err, &limit)
		assert.Equal(t, strtemplate.BoundOutputBytes, limit.Bound)
		assert.Contains(t, err.Error(), "LLMInferenceServiceConfig bomb: spec.template.containers[0].env[0].value: template: bomb:")

		// The service's own spec may add at most the bound to its size.
		small := Global{TemplateLimits: strtemplate.Limits{MaxOutputBytes: 100}}
		_, err = Combine(context.Background(), svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
			s.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Args: []string{"{{ printf `%200s` `` }}"}}}}
		}), source{system: presetsForTest()}, small, ns)
		require.ErrorAs(t, err, &limit)
		assert.Equal(t, 100, limit.Limit)
	})
}

// TestAdaptersAreRoutedByHeader: each LoRA adapter is routed by the
// model-name header as the base model is.
func TestAdaptersAreRoutedByHeader(t *testing.T) {
	header := gwapiv1.HTTPHeaderMatch{Name: "X-Gateway-Model-Name", Value: "publishers/team/models/llama"}
	spec := v1alpha2.LLMInferenceServiceSpec{
		Model: v1alpha2.LLMModelSpec{LoRA: &v1alpha2.LoRASpec{Adapters: []v1alpha2.LLMModelSpec{{Name: ptr.To("sql")}, {Name: ptr.To("chat")}}}},
		Router: &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{HTTP: &v1alpha2.HTTPRouteSpec{Spec: &gwapiv1.HTTPRouteSpec{
			Rules: []gwapiv1.HTTPRouteRule{{Matches: []gwapiv1.HTTPRouteMatch{
				{Headers: []gwapiv1.HTTPHeaderMatch{header}}, {Path: &gwapiv1.HTTPPathMatch{Value: ptr.To("/team/llama")}}}}}}}}},
	}
	routeAdapters(&spec, "team", "X-Gateway-Model-Name")
	var values []string
	for _, m := range spec.Router.Route.HTTP.Spec.Rules[0].Matches {
		for _, h := range m.Headers {
			values = append(values, h.Value)
		}
	}
	assert.Equal(t, []string{"publishers/team/models/llama", "publishers/team/models/chat", "publishers/team/models/sql"}, values,
		"the base model's match, then one per adapter, by name; a path match is left alone")
	assert.Len(t, spec.Router.Route.HTTP.Spec.Rules[0].Matches, 4)
}

// TestTemplatesCannotWriteStructure: a template's output stays inside the
// string it was written in, whatever it prints. A model name that closes
// its JSON string and writes an HTTPRoute spec (the injection that a
// render of the spec's whole text allowed) renders as that text, in that
// field, and writes no route; a plain quote in a model name renders.
func TestTemplatesCannotWriteStructure(t *testing.T) {
	injection := `x"}},"router":{"route":{"http":{"spec":{"hostnames":["victim.example.com"]}}}},"z":{"a":"`
	for name, model := range map[string]string{
		"a fragment of JSON":  injection,
		"a quote in the name": `my "quoted" model`,
		"a quote printed":     "{{ printf `%c` 34 }}",
	} {
		t.Run(name, func(t *testing.T) {
			svc := svcWith(func(s *v1alpha2.LLMInferenceServiceSpec) {
				s.Model.Name = ptr.To(model)
				s.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main",
					Args: []string{"--served-model-name={{ .Spec.Model.Name }}", `{{ printf "%c%s%c" 34 .Spec.Model.Name 34 }}`}}}}
			})
			data := templateData(svc, Global{}, "pool")
			got, err := render(svc.Spec, data, svc.Name, strtemplate.Limits{})
			require.NoError(t, err)
			assert.Nil(t, got.Router, "a route written by a template")
			want := model
			if model == "{{ printf `%c` 34 }}" {
				want = `"`
			}
			assert.Equal(t, want, *got.Model.Name)
			assert.Equal(t, []string{"--served-model-name=" + model, `"` + model + `"`}, got.Template.Containers[0].Args)
		})
	}
}
