package v1alpha2

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func service(change func(*LLMInferenceServiceSpec)) *LLMInferenceService {
	s := &LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "ns"},
		Spec: LLMInferenceServiceSpec{Model: LLMModelSpec{URI: "hf://meta-llama/Llama-3.1-8B"}}}
	if change != nil {
		change(&s.Spec)
	}
	return s
}

func TestValidate(t *testing.T) {
	rawJSON := &apiextensionsv1.JSON{Raw: []byte(`{}`)}
	tests := []struct {
		name string
		svc  *LLMInferenceService
		// want are the error messages, in order; warn the warnings.
		want []string
		warn []string
	}{
		{name: "a model alone", svc: service(nil)},
		{name: "no model URI", svc: service(func(s *LLMInferenceServiceSpec) { s.Model.URI = "" }),
			want: []string{"spec.model.uri: Required value: the model's storage URI is required (hf://, s3://, gs://, pvc://, oci://...)"}},
		{name: "a field Serval does not implement, by name", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Model.Confidential = rawJSON
		}), want: []string{"spec.model.confidential: Forbidden: spec.model.confidential is not supported by Serval yet"}},
		{name: "a data-parallel worker with prefill, scaled, offloading, rolling", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Parallelism = &ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](2)}
			s.Scaling = &ScalingSpec{MaxReplicas: 3, WVA: &WVASpec{ActuatorSpec: ActuatorSpec{HPA: &HPAScalingSpec{}}}}
			s.KVCacheOffloading = &KVCacheOffloadingSpec{CPU: resource.MustParse("10Gi"),
				Secondary: []SecondaryTierSpec{{FileSystem: &FileSystemTierSpec{EmptyDir: &EmptyDirTierSpec{Size: resource.MustParse("100Gi")}}}}}
			s.RolloutStrategy = &RolloutStrategy{}
			s.Prefill = &WorkloadSpec{Replicas: ptr.To[int32](2)}
		})},
		{name: "more Gateways than a route takes", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Gateway: &GatewaySpec{Refs: make([]GatewayObjectReference, MaxRouterRefs+1)}}
			for i := range s.Router.Gateway.Refs {
				s.Router.Gateway.Refs[i].Name = fmt.Sprintf("gw-%d", i)
			}
		}), want: []string{"spec.router.gateway.refs: Too many: 33: must have at most 32 items"}},
		{name: "as many Gateways as a route takes", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Gateway: &GatewaySpec{Refs: make([]GatewayObjectReference, MaxRouterRefs)}}
			for i := range s.Router.Gateway.Refs {
				s.Router.Gateway.Refs[i].Name = fmt.Sprintf("gw-%d", i)
			}
		})},
		{name: "a worker without parallelism across nodes", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Worker = &corev1.PodSpec{}
			s.Prefill = &WorkloadSpec{Worker: &corev1.PodSpec{}, Parallelism: &ParallelismSpec{Tensor: ptr.To[int32](4)}}
		}), want: []string{
			`spec.worker: Invalid value: "set": a worker runs each replica across nodes: set spec.parallelism to data parallelism (data, dataLocal) or pipeline parallelism (pipeline)`,
			`spec.prefill.worker: Invalid value: "set": a worker runs each replica across nodes: set spec.prefill.parallelism to data parallelism (data, dataLocal) or pipeline parallelism (pipeline)`,
		}},
		{name: "scaling with replicas, min over max, both mechanisms", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Replicas = ptr.To[int32](2)
			s.Scaling = &ScalingSpec{MinReplicas: ptr.To[int32](4), MaxReplicas: 3, WVA: &WVASpec{}, KEDA: &DirectKEDAScalingSpec{}}
		}), want: []string{
			`spec.scaling: Invalid value: "set": scaling and spec.replicas are mutually exclusive: the autoscaler sets the replicas; remove one`,
			"spec.scaling.minReplicas: Invalid value: 4: minReplicas (4) cannot exceed maxReplicas (3)",
			`spec.scaling: Invalid value: "wva and keda": wva and keda are mutually exclusive: choose one`,
		}},
		{name: "no scaling mechanism; no actuator", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Scaling = &ScalingSpec{MaxReplicas: 3}
			s.Prefill = &WorkloadSpec{Scaling: &ScalingSpec{MaxReplicas: 3, WVA: &WVASpec{VariantCost: "5"}}}
		}), want: []string{
			"spec.scaling: Required value: set wva (the Workload Variant Autoscaler) or keda (KEDA on your triggers)",
			"spec.prefill.scaling.wva: Required value: set the actuator: hpa or keda",
		}},
		{name: "KEDA without triggers, idle count without minimum, an HPA name", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Scaling = &ScalingSpec{MaxReplicas: 3, KEDA: &DirectKEDAScalingSpec{KEDAScalingSpec: KEDAScalingSpec{
				IdleReplicaCount: ptr.To[int32](0), Advanced: &apiextensionsv1.JSON{Raw: []byte(`{"horizontalPodAutoscalerConfig":{"name":"mine"}}`)}}}}
		}), want: []string{
			"spec.scaling.keda.triggers: Required value: at least one trigger is required when KEDA scales on your triggers",
			"spec.scaling.keda.advanced.horizontalPodAutoscalerConfig.name: Forbidden: Serval names the HPA KEDA makes: remove the name",
			"spec.scaling.minReplicas: Required value: minReplicas is required when idleReplicaCount is set, and must be above it (0)",
		}},
		{name: "WVA's KEDA with modifiers and an idle count at the minimum", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Scaling = &ScalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, WVA: &WVASpec{ActuatorSpec: ActuatorSpec{KEDA: &KEDAScalingSpec{
				IdleReplicaCount: ptr.To[int32](1), Advanced: &apiextensionsv1.JSON{Raw: []byte(`{"scalingModifiers":{"formula":"a+b"}}`)}}}}}
		}), want: []string{
			"spec.scaling.wva.keda.advanced.scalingModifiers: Forbidden: the Workload Variant Autoscaler computes the replicas: remove scalingModifiers",
			"spec.scaling.wva.keda.idleReplicaCount: Invalid value: 1: idleReplicaCount (1) must be less than minReplicas (1): it is the count when no trigger is active",
		}},
		{name: "KV cache tiers that are not one volume", svc: service(func(s *LLMInferenceServiceSpec) {
			s.KVCacheOffloading = &KVCacheOffloadingSpec{Secondary: []SecondaryTierSpec{{},
				{FileSystem: &FileSystemTierSpec{}},
				{FileSystem: &FileSystemTierSpec{PVC: &PVCTierSpec{}}},
				{FileSystem: &FileSystemTierSpec{PVC: &PVCTierSpec{Ref: &PVCRefTierSpec{}}}}}}
		}), want: []string{
			`spec.kvCacheOffloading.cpu: Invalid value: "0": the CPU memory for the KV cache must be above zero ("10Gi")`,
			"spec.kvCacheOffloading.secondary[0].fileSystem: Required value: a secondary tier is a fileSystem tier",
			`spec.kvCacheOffloading.secondary[1].fileSystem: Invalid value: "emptyDir and pvc": set exactly one of emptyDir and pvc`,
			`spec.kvCacheOffloading.secondary[2].fileSystem.pvc: Invalid value: "spec and ref": set exactly one of spec (a claim per pod) and ref (your claim)`,
			"spec.kvCacheOffloading.secondary[3].fileSystem.pvc.ref.name: Required value: the claim's name",
		}},
		{name: "tensor past a node", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism = &ParallelismSpec{Tensor: ptr.To[int32](1000000)}
		}), want: []string{"spec.parallelism.tensor: Invalid value: 1000000: tensor parallelism is at most 64: it splits each layer over the accelerators of one node"}},
		{name: "tensor over the accelerators asked for", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism = &ParallelismSpec{Tensor: ptr.To[int32](8)}
			s.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}
		}), want: []string{"spec.parallelism.tensor: Invalid value: 8: 8 accelerators per pod are needed (tensor 8 × dataLocal 1), and the main container asks for 1 nvidia.com/gpu: raise its nvidia.com/gpu or lower tensor"}},
		{name: "data not a multiple of dataLocal", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism, s.Worker = &ParallelismSpec{Data: ptr.To[int32](4), DataLocal: ptr.To[int32](3)}, &corev1.PodSpec{}
		}), want: []string{"spec.parallelism.data: Invalid value: 4: data (4) must be a multiple of dataLocal (3): each node runs dataLocal ranks, so data/dataLocal nodes must hold them all"}},
		{name: "pipeline without a worker", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism = &ParallelismSpec{Pipeline: ptr.To[int32](2)}
		}), want: []string{"spec.parallelism.pipeline: Invalid value: 2: pipeline parallelism runs each replica across nodes: set spec.worker (the pods beside the leader)"}},
		{name: "expert without data parallelism", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism = &ParallelismSpec{Expert: true}
		}), want: []string{"spec.parallelism.expert: Invalid value: true: expert parallelism runs with data parallelism across nodes: set data, dataLocal and spec.worker"}},
		{name: "a picker config the picker cannot load", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Scheduler: &SchedulerSpec{Config: &SchedulerConfigSpec{Inline: &runtime.RawExtension{Raw: []byte(`{"kind":"Nope","plugins":"notalist"}`)}}}}
		}), want: []string{
			`spec.router.scheduler.config.inline.kind: Invalid value: "Nope": the picker reads kind EndpointPickerConfig`,
			`spec.router.scheduler.config.inline.plugins: Invalid value: "notalist": plugins is a list`}},
		{name: "an inline picker config past the argument bound", svc: service(func(s *LLMInferenceServiceSpec) {
			big := `{"kind":"EndpointPickerConfig","plugins":[{"type":"x","parameters":{"pad":"` + strings.Repeat("p", MaxInlinePickerConfigBytes) + `"}}]}`
			s.Router = &RouterSpec{Scheduler: &SchedulerSpec{Config: &SchedulerConfigSpec{Inline: &runtime.RawExtension{Raw: []byte(big)}}}}
		}), want: []string{
			`spec.router.scheduler.config.inline: Invalid value: the config is 65616 bytes; the limit is 65536: the picker receives it as one command-line argument (--config-text), which Linux caps at 128 KiB; put a larger one in a ConfigMap (config.ref)`}},
		{name: "a tracing endpoint that is no URL", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Tracing = &TracingSpec{ExporterEndpoint: ptr.To("not a url ::")}
		}), want: []string{`spec.tracing.exporterEndpoint: Invalid value: "not a url ::": the OTLP exporter's endpoint is a URL with a scheme and a host, such as http://otel-collector.observability:4317`}},
		{name: "pipeline and data parallelism", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Parallelism = &ParallelismSpec{Pipeline: ptr.To[int32](2), Data: ptr.To[int32](2)}
			s.Worker = &corev1.PodSpec{}
		}), want: []string{
			`spec.parallelism: Invalid value: "pipeline and data": set pipeline parallelism or data parallelism (data, dataLocal), not both`,
			"spec.parallelism.dataLocal: Required value: dataLocal must be set when data is set",
		}},
		{name: "route refs and spec", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Route: &GatewayRoutesSpec{HTTP: &HTTPRouteSpec{Refs: []corev1.LocalObjectReference{{Name: "mine"}}, Spec: &gwapiv1.HTTPRouteSpec{}}}}
		}), want: []string{`spec.router.route.http: Invalid value: "refs and spec": set either spec.router.route.http.refs (your own HTTPRoutes) or spec.router.route.http.spec (one Serval makes), not both`}},
		{name: "own routes with the default Gateway", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Gateway: &GatewaySpec{}, Route: &GatewayRoutesSpec{HTTP: &HTTPRouteSpec{Refs: []corev1.LocalObjectReference{{Name: "mine"}}}}}
		}), want: []string{"spec.router.route.http.refs: Invalid value: 1: your own HTTPRoutes cannot be used with the default Gateway: remove spec.router.route.http.refs or set spec.router.gateway.refs"}},
		{name: "parentRefs that repeat the Gateway refs", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Gateway: &GatewaySpec{Refs: []GatewayObjectReference{{UntypedObjectReference: UntypedObjectReference{Name: "gw", Namespace: "infra"}}}},
				Route: &GatewayRoutesSpec{HTTP: &HTTPRouteSpec{Spec: &gwapiv1.HTTPRouteSpec{CommonRouteSpec: gwapiv1.CommonRouteSpec{
					ParentRefs: []gwapiv1.ParentReference{{Name: "gw", Namespace: ptr.To[gwapiv1.Namespace]("infra")}}}}}}}
		}), warn: []string{"spec.router.route.http.spec.parentRefs can be left out when spec.router.gateway.refs is set: Serval derives them from it"}},
		{name: "parentRefs that differ from the Gateway refs", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Gateway: &GatewaySpec{Refs: []GatewayObjectReference{{UntypedObjectReference: UntypedObjectReference{Name: "gw"}}}},
				Route: &GatewayRoutesSpec{HTTP: &HTTPRouteSpec{Spec: &gwapiv1.HTTPRouteSpec{CommonRouteSpec: gwapiv1.CommonRouteSpec{
					ParentRefs: []gwapiv1.ParentReference{{Name: "other"}}}}}}}
		}), want: []string{"spec.router.route.http.spec.parentRefs: Invalid value: 1: the route's parentRefs name other Gateways than spec.router.gateway.refs: remove one of them"}},
		{name: "scheduler config both ways, zero replicas", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Scheduler: &SchedulerSpec{Replicas: ptr.To[int32](0), Config: &SchedulerConfigSpec{
				Inline: &runtime.RawExtension{Raw: []byte(`{"kind":"EndpointPickerConfig"}`)}, Ref: &corev1.ConfigMapKeySelector{}}}}
		}), want: []string{
			"spec.router.scheduler.replicas: Invalid value: 0: the scheduler's replicas must be greater than zero",
			`spec.router.scheduler.config: Invalid value: "inline and ref": set either config.inline or config.ref, not both`,
			"spec.router.scheduler.config.ref.name: Required value: the ConfigMap's name is required",
		}},
		{name: "an inline config that is no object", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Scheduler: &SchedulerSpec{Config: &SchedulerConfigSpec{Inline: &runtime.RawExtension{Raw: []byte(`"x"`)}}}}
		}), want: []string{`spec.router.scheduler.config.inline: Invalid value: "\"x\"": not an EndpointPickerConfig object`}},
		{name: "LoRA adapters", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Model.LoRA = &LoRASpec{Adapters: []LLMModelSpec{
				{Name: ptr.To("sql"), URI: "hf://org/sql"}, {Name: ptr.To("sql"), URI: "hf://org/sql2"}, {URI: "hf://org/x"},
				{Name: ptr.To(".."), URI: "hf://org/y"}, {Name: ptr.To("llama"), URI: "s3://b/z"}, {Name: ptr.To("nouri")}}}
		}), want: []string{
			`spec.model.lora.adapters[1].name: Duplicate value: "sql"`,
			"spec.model.lora.adapters[2].name: Required value: every adapter needs a name: requests select it by that name",
			`spec.model.lora.adapters[3].name: Invalid value: "..": an adapter's name must not be "." or ".." (it is a directory name)`,
			`spec.model.lora.adapters[4].name: Invalid value: "llama": an adapter's name must differ from the base model's ("llama")`,
			"spec.model.lora.adapters[5].uri: Required value: every adapter needs a storage URI",
		}},
		{name: "LoRA storage", svc: service(func(s *LLMInferenceServiceSpec) {
			s.StorageInitializer = &StorageInitializerSpec{Enabled: ptr.To(false)}
			s.Model.LoRA = &LoRASpec{Adapters: []LLMModelSpec{{Name: ptr.To("a"), URI: "oci://registry/lora:1"}, {Name: ptr.To("b"), URI: "gs://bucket/b"}}}
		}), want: []string{
			`spec.model.lora.adapters[0].uri: Invalid value: "oci://registry/lora:1": a LoRA adapter is stored at an hf://, s3:// or pvc:// URI`,
			`spec.model.lora.adapters[1].uri: Invalid value: "gs://bucket/b": a LoRA adapter is stored at an hf://, s3:// or pvc:// URI`,
			"spec.storageInitializer.enabled: Invalid value: false: LoRA adapters need the storage initializer (to download hf:// and s3:// adapters, and to mount pvc:// ones): remove storageInitializer.enabled: false",
		}},
		{name: "a group without weight, with an Ingress", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Ingress: &IngressSpec{}, Route: &GatewayRoutesSpec{Group: ptr.To("chat")}}
		}), want: []string{
			"spec.router.ingress.refs: Required value: router.ingress names your own Ingresses, whose addresses become the service's URLs; Serval makes no Ingress for an LLMInferenceService (nor does KServe): name them in refs, or remove router.ingress",
			`spec.router.route.group: Invalid value: "chat": a routing group splits traffic with Gateway API routes, which router.ingress does not use: remove router.ingress`}},
		{name: "an Ingress of another namespace, or without a name", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Ingress: &IngressSpec{Refs: []UntypedObjectReference{{Name: "web", Namespace: "elsewhere"}, {Namespace: "ns"}, {Name: "mine", Namespace: "ns"}}}}
		}), want: []string{
			`spec.router.ingress.refs[0].namespace: Invalid value: "elsewhere": an Ingress of another namespace cannot give this service its URL: name one in ns`,
			"spec.router.ingress.refs[1].name: Required value: the Ingress's name"}},
		{name: "weight without group", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Route: &GatewayRoutesSpec{Weight: ptr.To[int32](10)}}
		}), want: []string{"spec.router.route.group: Required value: weight requires group"}},
		{name: "a group without weight", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Route: &GatewayRoutesSpec{Group: ptr.To("chat")}}
		}), want: []string{"spec.router.route.weight: Required value: group requires weight"}},
		{name: "a group of the user's own routes", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Route: &GatewayRoutesSpec{Group: ptr.To("chat"), Weight: ptr.To[int32](50),
				HTTP: &HTTPRouteSpec{Refs: []corev1.LocalObjectReference{{Name: "mine"}}}}}
		}), want: []string{`spec.router.route.group: Invalid value: "chat": a routing group splits the traffic of the route Serval manages, not of your own routes (router.route.http.refs): remove the refs`}},
		{name: "a group with its weight is accepted", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Route: &GatewayRoutesSpec{Group: ptr.To("chat"), Weight: ptr.To[int32](50)}}
		})},
		{name: "a tokenizer, asked for and needed by a plugin, is accepted", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Router = &RouterSpec{Scheduler: &SchedulerSpec{Tokenizer: &TokenizerSpec{}, Config: &SchedulerConfigSpec{
				Inline: &runtime.RawExtension{Raw: []byte("plugins:\n- type: token-producer\n")}}}}
		})},
		{name: "a templated URI is checked once rendered", svc: service(func(s *LLMInferenceServiceSpec) {
			s.Model.URI = "{{ .ObjectMeta.Annotations.model }}"
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, errs := Validate(tt.svc, nil)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.warn, warnings)
		})
	}
}

func TestParallelismIsImmutable(t *testing.T) {
	prev := service(func(s *LLMInferenceServiceSpec) {
		s.Parallelism, s.Worker = &ParallelismSpec{Pipeline: ptr.To[int32](2)}, &corev1.PodSpec{}
	})
	same := service(func(s *LLMInferenceServiceSpec) {
		s.Parallelism, s.Worker = &ParallelismSpec{Pipeline: ptr.To[int32](2), Tensor: ptr.To[int32](8)}, &corev1.PodSpec{}
	})
	grown := service(func(s *LLMInferenceServiceSpec) {
		s.Parallelism, s.Worker = &ParallelismSpec{Pipeline: ptr.To[int32](4)}, &corev1.PodSpec{}
	})
	_, errs := Validate(same, prev)
	assert.Empty(t, errs)
	_, errs = Validate(grown, prev)
	assert.EqualError(t, errs.ToAggregate(), "spec.parallelism: Invalid value: 4: the number of nodes a replica spans cannot change (it was 2, it would be 4): create a new service")
}

func TestParallelismSize(t *testing.T) {
	assert.Equal(t, int32(1), (*ParallelismSpec)(nil).Size())
	assert.Equal(t, int32(1), (&ParallelismSpec{Tensor: ptr.To[int32](8)}).Size(), "tensor parallelism stays on one node")
	assert.Equal(t, int32(4), (&ParallelismSpec{Data: ptr.To[int32](16), DataLocal: ptr.To[int32](4)}).Size())
	assert.Equal(t, int32(3), (&ParallelismSpec{Pipeline: ptr.To[int32](3)}).Size())
}

func TestDefault(t *testing.T) {
	svc := service(func(s *LLMInferenceServiceSpec) {
		s.Router = &RouterSpec{Route: &GatewayRoutesSpec{Group: ptr.To("chat")}}
	})
	Default(svc)
	assert.Equal(t, "llama", *svc.Spec.Model.Name, "the model is named after the service")
	assert.Equal(t, "chat", svc.Labels[RoutingGroupLabel], "the routing group is a label")
	svc.Spec.Router = nil
	svc.Spec.Model.Name = ptr.To("llama-3")
	Default(svc)
	assert.Equal(t, "llama-3", *svc.Spec.Model.Name)
	assert.NotContains(t, svc.Labels, RoutingGroupLabel, "the label goes with the group")
}
