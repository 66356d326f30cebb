package v1alpha2

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The largest parallel sizes admitted: no node holds more than
// maxTensorParallel accelerators, and no replica spans more than
// maxParallelSize nodes or ranks. Larger values are typing mistakes that
// would only fail in vLLM, after the pods are scheduled.
const (
	maxTensorParallel = 64
	maxParallelSize   = 4096
)

// validateSizes bounds the parallel sizes and refuses a data parallel size
// that is not a whole number of nodes: data 4 with dataLocal 3 would make
// one node of 3 ranks and lose the fourth.
func validateSizes(p *field.Path, par *ParallelismSpec) field.ErrorList {
	var errs field.ErrorList
	if par.Tensor != nil && *par.Tensor > maxTensorParallel {
		errs = append(errs, field.Invalid(p.Child("tensor"), *par.Tensor,
			fmt.Sprintf("tensor parallelism is at most %d: it splits each layer over the accelerators of one node", maxTensorParallel)))
	}
	for name, v := range map[string]*int32{"pipeline": par.Pipeline, "data": par.Data, "dataLocal": par.DataLocal} {
		if v != nil && *v > maxParallelSize {
			errs = append(errs, field.Invalid(p.Child(name), *v, fmt.Sprintf("%s parallelism is at most %d", name, maxParallelSize)))
		}
	}
	if d, l := par.Data, par.DataLocal; d != nil && l != nil && *d > 0 && *l > 0 && *d%*l != 0 {
		errs = append(errs, field.Invalid(p.Child("data"), *d,
			fmt.Sprintf("data (%d) must be a multiple of dataLocal (%d): each node runs dataLocal ranks, so data/dataLocal nodes must hold them all", *d, *l)))
	}
	return errs
}

// validateParallelShape holds of a spec that is whole (a service without
// baseRefs, or a service merged with its presets): what its parallelism
// asks for, its pods must be able to run. Pipeline parallelism and expert
// parallelism run across nodes, so they need a worker (and expert, data
// parallelism): without one vLLM would drop them without a word. Tensor
// parallelism needs as many accelerators per pod as it asks for.
func validateParallelShape(s *LLMInferenceServiceSpec) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	check := func(p *field.Path, w *WorkloadSpec) {
		par := w.Parallelism
		if par == nil {
			return
		}
		pp := p.Child("parallelism")
		if par.Pipeline != nil && *par.Pipeline > 1 && w.Worker == nil {
			errs = append(errs, field.Invalid(pp.Child("pipeline"), *par.Pipeline,
				"pipeline parallelism runs each replica across nodes: set "+p.Child("worker").String()+" (the pods beside the leader)"))
		}
		if par.Expert && (!par.IsDataParallel() || w.Worker == nil) {
			errs = append(errs, field.Invalid(pp.Child("expert"), true,
				"expert parallelism runs with data parallelism across nodes: set data, dataLocal and "+p.Child("worker").String()))
		}
		if par.Tensor == nil || w.Template == nil {
			return
		}
		perPod := int64(*par.Tensor)
		if par.DataLocal != nil && *par.DataLocal > 0 {
			perPod *= int64(*par.DataLocal)
		}
		for _, c := range w.Template.Containers {
			if c.Name != "main" {
				continue
			}
			if name, n := acceleratorsOf(c.Resources); n > 0 && n < perPod {
				errs = append(errs, field.Invalid(pp.Child("tensor"), *par.Tensor, fmt.Sprintf(
					"%d accelerators per pod are needed (tensor %d × dataLocal %d), and the main container asks for %d %s: raise its %s or lower tensor",
					perPod, *par.Tensor, perPod/int64(*par.Tensor), n, name, name)))
			}
		}
	}
	check(spec, &s.WorkloadSpec)
	if s.Prefill != nil {
		check(spec.Child("prefill"), s.Prefill)
	}
	return errs
}

// acceleratorsOf is the accelerator resource a container asks for (a name
// ending in /gpu, such as nvidia.com/gpu or amd.com/gpu) and how many:
// its limit, else its request.
func acceleratorsOf(r corev1.ResourceRequirements) (corev1.ResourceName, int64) {
	for _, list := range []corev1.ResourceList{r.Limits, r.Requests} {
		for name, q := range list {
			if strings.HasSuffix(string(name), "/gpu") {
				return name, q.Value()
			}
		}
	}
	return "", 0
}

// MaxInlinePickerConfigBytes bounds an inline endpoint-picker config: the
// picker gets it as one command-line argument, which Linux caps at 128 KiB
// (MAX_ARG_STRLEN); past it the picker's container could not start. Half
// of it leaves room for the YAML it is written as.
const MaxInlinePickerConfigBytes = 64 << 10

// validatePickerConfig checks the shape of an inline EndpointPickerConfig,
// so that a config the picker cannot load is refused here rather than
// crash-looping the picker: its kind, and plugins and schedulingProfiles
// as lists of objects with a type or a name.
func validatePickerConfig(p *field.Path, raw []byte) field.ErrorList {
	if len(raw) > MaxInlinePickerConfigBytes {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf(
			"the config is %d bytes; the limit is %d: the picker receives it as one command-line argument (--config-text), which Linux caps at 128 KiB; put a larger one in a ConfigMap (config.ref)",
			len(raw), MaxInlinePickerConfigBytes))}
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil || len(cfg) == 0 {
		return field.ErrorList{field.Invalid(p, string(raw), "not an EndpointPickerConfig object")}
	}
	var errs field.ErrorList
	if kind, ok := cfg["kind"]; ok && kind != "EndpointPickerConfig" {
		errs = append(errs, field.Invalid(p.Child("kind"), kind, "the picker reads kind EndpointPickerConfig"))
	}
	list := func(key, required string) {
		v, ok := cfg[key]
		if !ok {
			return
		}
		items, isList := v.([]any)
		if !isList {
			errs = append(errs, field.Invalid(p.Child(key), v, key+" is a list"))
			return
		}
		for i, item := range items {
			obj, isObj := item.(map[string]any)
			if !isObj {
				errs = append(errs, field.Invalid(p.Child(key).Index(i), item, "an object"))
				continue
			}
			if s, _ := obj[required].(string); s == "" {
				errs = append(errs, field.Required(p.Child(key).Index(i).Child(required), "each of "+key+" has a "+required))
			}
		}
	}
	list("plugins", "type")
	list("schedulingProfiles", "name")
	return errs
}

// validateTracing checks the exporter endpoint is a URL with a scheme and
// a host (OTEL_EXPORTER_OTLP_ENDPOINT): an endpoint that is not one is
// silently dropped by the exporters.
func validateTracing(t *TracingSpec) field.ErrorList {
	if t == nil || t.ExporterEndpoint == nil || *t.ExporterEndpoint == "" || hasTemplate(*t.ExporterEndpoint) {
		return nil
	}
	e := *t.ExporterEndpoint
	if u, err := url.Parse(e); err != nil || u.Scheme == "" || u.Host == "" {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "tracing", "exporterEndpoint"), e,
			"the OTLP exporter's endpoint is a URL with a scheme and a host, such as http://otel-collector.observability:4317")}
	}
	return nil
}
