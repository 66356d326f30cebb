package v1alpha2

import (
	"cmp"
	"fmt"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// notYet is the message of a KServe field Serval does not implement yet.
const notYet = "not supported by Serval yet"

// Validate checks an LLMInferenceService as admission does: KServe's rules,
// the model's storage URI, and the fields Serval does not implement yet,
// refused by name. prev is the stored object on an update, else nil. The
// warnings are for a spec that is valid but says something twice.
func Validate(svc, prev *LLMInferenceService) (warnings []string, errs field.ErrorList) {
	spec := field.NewPath("spec")
	if svc.Spec.Model.URI == "" {
		errs = append(errs, field.Required(spec.Child("model", "uri"), "the model's storage URI is required (hf://, s3://, gs://, pvc://, oci://...)"))
	}
	errs = append(errs, ValidateSpec(&svc.Spec, svc.Name)...)
	errs = append(errs, validateWorkerShape(&svc.Spec)...)
	if len(svc.Spec.BaseRefs) == 0 {
		// Nothing else can bring a worker or a template: the service is
		// whole. With baseRefs, ValidateCombined checks the merged spec.
		errs = append(errs, validateParallelShape(&svc.Spec)...)
	}
	warnings = append(warnings, v1beta1.StopWarnings(svc.Annotations)...)
	errs = append(errs, ValidateManagedDRA(svc.Annotations)...)
	w, routeErrs := validateRouter(svc.Spec.Router)
	warnings = append(warnings, w...)
	errs = append(errs, routeErrs...)
	if r := svc.Spec.Router; r != nil && r.Ingress != nil {
		for i, ref := range r.Ingress.Refs {
			if ref.Namespace != "" && ref.Namespace != svc.Namespace {
				errs = append(errs, field.Invalid(spec.Child("router", "ingress", "refs").Index(i).Child("namespace"), ref.Namespace,
					"an Ingress of another namespace cannot give this service its URL: name one in "+svc.Namespace))
			}
			if ref.Name == "" {
				errs = append(errs, field.Required(spec.Child("router", "ingress", "refs").Index(i).Child("name"), "the Ingress's name"))
			}
		}
	}
	if prev != nil {
		errs = append(errs, validateImmutableParallelism(spec.Child("parallelism"), prev.Spec.Parallelism, svc.Spec.Parallelism)...)
		if prev.Spec.Prefill != nil && svc.Spec.Prefill != nil {
			errs = append(errs, validateImmutableParallelism(spec.Child("prefill", "parallelism"), prev.Spec.Prefill.Parallelism, svc.Spec.Prefill.Parallelism)...)
		}
	}
	return warnings, errs
}

// ValidateCombined checks a service's spec merged with its presets: the
// rules of any spec, and the shape of its workloads.
func ValidateCombined(s *LLMInferenceServiceSpec, baseModel string) field.ErrorList {
	return append(append(ValidateSpec(s, baseModel), validateWorkerShape(s)...), validateParallelShape(s)...)
}

// ValidateConfig checks a preset: the rules of a spec that hold of its
// parts (a preset may leave the model out; its strings may be templates
// rendered later).
func ValidateConfig(cfg *LLMInferenceServiceConfig) field.ErrorList {
	errs := ValidateSpec(&cfg.Spec, "")
	if len(cfg.Spec.BaseRefs) > 0 {
		// KServe's message: presets do not name presets.
		errs = append(errs, field.Forbidden(field.NewPath("spec", "baseRefs"),
			"baseRefs is not a permitted field in LLMInferenceServiceConfig, support for recursive refs has been disabled"))
	}
	return errs
}

// ValidateSpec checks the rules that hold of any spec, a service's or a
// preset's. baseModel is the service's name, the model's name when it has
// none ("" for a preset).
func ValidateSpec(s *LLMInferenceServiceSpec, baseModel string) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, refuseUnsupported(s)...)
	errs = append(errs, validateWorkloads(s)...)
	errs = append(errs, validateScheduler(s.Router)...)
	errs = append(errs, validateRefCounts(s.Router)...)
	errs = append(errs, validateLoRA(s.Model.LoRA, ptr.Deref(s.Model.Name, baseModel), spec.Child("model", "lora"))...)
	errs = append(errs, validateLoRAStorage(s)...)
	errs = append(errs, validateTraffic(s.Router)...)
	errs = append(errs, validateTracing(s.Tracing)...)
	return errs
}

// URIRef is a storage URI of a spec and its field.
// +kubebuilder:object:generate=false
type URIRef struct {
	Path *field.Path
	URI  string
}

// StorageURIs are the spec's storage URIs that a check of their form must
// see (the model's, the adapters'), leaving out those that hold a template
// (rendered later) and the adapters' of a scheme ValidateSpec refuses. The
// form is the storage package's to check (storage.CheckURIs): API types
// import nothing above them.
func StorageURIs(s *LLMInferenceServiceSpec) []URIRef {
	spec := field.NewPath("spec")
	var out []URIRef
	if s.Model.URI != "" && !hasTemplate(s.Model.URI) {
		out = append(out, URIRef{Path: spec.Child("model", "uri"), URI: s.Model.URI})
	}
	if l := s.Model.LoRA; l != nil {
		for i, a := range l.Adapters {
			scheme, _, _ := strings.Cut(a.URI, "://")
			if a.URI != "" && !hasTemplate(a.URI) && slices.Contains([]string{"hf", "s3", "pvc"}, scheme) {
				out = append(out, URIRef{Path: spec.Child("model", "lora", "adapters").Index(i).Child("uri"), URI: a.URI})
			}
		}
	}
	return out
}

// refuseUnsupported refuses, by name, the KServe fields Serval does not
// implement yet.
func refuseUnsupported(s *LLMInferenceServiceSpec) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	refuse := func(set bool, p *field.Path) {
		if set {
			errs = append(errs, field.Forbidden(p, p.String()+" is "+notYet))
		}
	}
	refuse(s.Model.Confidential != nil, spec.Child("model", "confidential"))
	if r := s.Router; r != nil {
		if r.Ingress != nil && len(r.Ingress.Refs) == 0 {
			errs = append(errs, field.Required(spec.Child("router", "ingress", "refs"),
				"router.ingress names your own Ingresses, whose addresses become the service's URLs; Serval makes no Ingress for an LLMInferenceService (nor does KServe): name them in refs, or remove router.ingress"))
		}

		if r.Scheduler != nil {
		}
	}
	return errs
}

// MaxRouterRefs bounds router.gateway.refs, router.route.http.refs and
// router.ingress.refs: Serval reads each of them from the API server at
// every reconcile, and an HTTPRoute takes at most 32 parentRefs (Gateway
// API's bound), the Gateways a managed route attaches to.
const MaxRouterRefs = 32

// validateRefCounts bounds the objects the router names.
func validateRefCounts(r *RouterSpec) field.ErrorList {
	if r == nil {
		return nil
	}
	p := field.NewPath("spec", "router")
	var errs field.ErrorList
	tooMany := func(n int, path *field.Path) {
		if n > MaxRouterRefs {
			errs = append(errs, field.TooMany(path, n, MaxRouterRefs))
		}
	}
	if r.Gateway != nil {
		tooMany(len(r.Gateway.Refs), p.Child("gateway", "refs"))
	}
	if r.Route != nil && r.Route.HTTP != nil {
		tooMany(len(r.Route.HTTP.Refs), p.Child("route", "http", "refs"))
	}
	if r.Ingress != nil {
		tooMany(len(r.Ingress.Refs), p.Child("ingress", "refs"))
	}
	return errs
}

// validateRouter checks the route against the Gateways, as KServe does.
func validateRouter(r *RouterSpec) (warnings []string, errs field.ErrorList) {
	if r == nil || r.Route == nil || r.Route.HTTP == nil {
		return nil, nil
	}
	routePath := field.NewPath("spec", "router", "route", "http")
	refsPath, specPath := routePath.Child("refs"), routePath.Child("spec")
	gwRefsPath := field.NewPath("spec", "router", "gateway", "refs")
	http := r.Route.HTTP
	if len(http.Refs) > 0 && http.Spec != nil {
		errs = append(errs, field.Invalid(routePath, "refs and spec",
			fmt.Sprintf("set either %s (your own HTTPRoutes) or %s (one Serval makes), not both", refsPath, specPath)))
	}
	if len(http.Refs) > 0 && r.Gateway != nil && len(r.Gateway.Refs) == 0 {
		errs = append(errs, field.Invalid(refsPath, len(http.Refs),
			fmt.Sprintf("your own HTTPRoutes cannot be used with the default Gateway: remove %s or set %s", refsPath, gwRefsPath)))
	}
	if http.Spec != nil && len(http.Spec.ParentRefs) > 0 && r.Gateway != nil && len(r.Gateway.Refs) > 0 {
		if sameGateways(http.Spec.ParentRefs, r.Gateway.Refs) {
			warnings = append(warnings, fmt.Sprintf("%s.parentRefs can be left out when %s is set: Serval derives them from it", specPath, gwRefsPath))
		} else {
			errs = append(errs, field.Invalid(specPath.Child("parentRefs"), len(http.Spec.ParentRefs),
				fmt.Sprintf("the route's parentRefs name other Gateways than %s: remove one of them", gwRefsPath)))
		}
	}
	return warnings, errs
}

// sameGateways reports whether parent references and Gateway references
// name the same listeners.
func sameGateways(parents []gwapiv1.ParentReference, gateways []GatewayObjectReference) bool {
	a := make([]gatewayKey, len(parents))
	for i, r := range parents {
		a[i] = gatewayKey{string(ptr.Deref(r.Namespace, "")), string(r.Name), string(ptr.Deref(r.SectionName, ""))}
	}
	return sameGatewayKeys(a, gatewayKeys(gateways))
}

type gatewayKey struct{ namespace, name, section string }

func compareKeys(a, b gatewayKey) int {
	return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name), cmp.Compare(a.section, b.section))
}

func sameGatewayKeys(a, b []gatewayKey) bool {
	slices.SortFunc(a, compareKeys)
	slices.SortFunc(b, compareKeys)
	return slices.Equal(a, b)
}

func gatewayKeys(refs []GatewayObjectReference) []gatewayKey {
	out := make([]gatewayKey, len(refs))
	for i, r := range refs {
		out[i] = gatewayKey{r.Namespace, r.Name, ptr.Deref(r.SectionName, "")}
	}
	return out
}

// validateParallelism checks that the sizes are consistent.
func validateParallelism(p *field.Path, par *ParallelismSpec) field.ErrorList {
	if par == nil {
		return nil
	}
	var errs field.ErrorList
	if par.IsPipelineParallel() && par.IsDataParallel() {
		errs = append(errs, field.Invalid(p, "pipeline and data", "set pipeline parallelism or data parallelism (data, dataLocal), not both"))
	}
	if par.Data != nil && par.DataLocal == nil {
		errs = append(errs, field.Required(p.Child("dataLocal"), "dataLocal must be set when data is set"))
	}
	if par.DataLocal != nil && par.Data == nil {
		errs = append(errs, field.Required(p.Child("data"), "data must be set when dataLocal is set"))
	}
	for name, v := range map[string]*int32{"tensor": par.Tensor, "pipeline": par.Pipeline, "data": par.Data, "dataLocal": par.DataLocal} {
		if v != nil && *v <= 0 {
			errs = append(errs, field.Invalid(p.Child(name), *v, name+" parallelism must be greater than 0"))
		}
	}
	errs = append(errs, validateSizes(p, par)...)
	slices.SortFunc(errs, func(a, b *field.Error) int { return cmp.Compare(a.Field, b.Field) })
	return errs
}

// validateImmutableParallelism refuses a change of the number of nodes a
// replica spans (ParallelismSpec.Size): its groups of pods are sized by it.
func validateImmutableParallelism(p *field.Path, prev, curr *ParallelismSpec) field.ErrorList {
	if before, after := prev.Size(), curr.Size(); before != after {
		return field.ErrorList{field.Invalid(p, after, fmt.Sprintf("the number of nodes a replica spans cannot change (it was %d, it would be %d): create a new service", before, after))}
	}
	return nil
}

// validateScheduler checks the picker's replicas and its config.
func validateScheduler(r *RouterSpec) field.ErrorList {
	if r == nil || r.Scheduler == nil {
		return nil
	}
	p := field.NewPath("spec", "router", "scheduler")
	var errs field.ErrorList
	s := r.Scheduler
	if s.Replicas != nil && *s.Replicas <= 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), *s.Replicas, "the scheduler's replicas must be greater than zero"))
	}
	if s.Pool != nil && s.Pool.Spec != nil && s.Pool.Ref != nil {
		errs = append(errs, field.Invalid(p.Child("pool"), "spec and ref", "set either pool.spec (an InferencePool Serval makes) or pool.ref (your own), not both"))
	}
	if s.Pool != nil && s.Pool.Spec != nil {
		errs = append(errs, validatePoolSpec(s.Pool.Spec, p.Child("pool", "spec"))...)
	}
	c := s.Config
	if c == nil {
		return errs
	}
	cp := p.Child("config")
	switch {
	case c.Inline == nil && c.Ref == nil:
		errs = append(errs, field.Required(cp, "set config.inline (an EndpointPickerConfig) or config.ref (a ConfigMap key holding one)"))
	case c.Inline != nil && c.Ref != nil:
		errs = append(errs, field.Invalid(cp, "inline and ref", "set either config.inline or config.ref, not both"))
	}
	if c.Inline != nil {
		errs = append(errs, validatePickerConfig(cp.Child("inline"), c.Inline.Raw)...)
	}
	if c.Ref != nil && c.Ref.Name == "" {
		errs = append(errs, field.Required(cp.Child("ref", "name"), "the ConfigMap's name is required"))
	}
	return errs
}

// validatePoolSpec checks an InferencePool's spec as the CRD KServe embeds
// it does: a selector with at least one label, one to eight target ports,
// each a port number once, and an endpoint picker named.
func validatePoolSpec(spec *igwapi.InferencePoolSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Selector.MatchLabels) == 0 {
		errs = append(errs, field.Required(p.Child("selector", "matchLabels"), "the pool's pods are selected by at least one label"))
	}
	tp := p.Child("targetPorts")
	switch n := len(spec.TargetPorts); {
	case n == 0:
		errs = append(errs, field.Required(tp, "at least one port the model servers listen on"))
	case n > 8:
		errs = append(errs, field.TooMany(tp, n, 8))
	}
	seen := map[int32]bool{}
	for i, port := range spec.TargetPorts {
		n := int32(port.Number)
		switch {
		case n < 1 || n > 65535:
			errs = append(errs, field.Invalid(tp.Index(i).Child("number"), n, "a port number is 1 to 65535"))
		case seen[n]:
			errs = append(errs, field.Duplicate(tp.Index(i).Child("number"), n))
		}
		seen[n] = true
	}
	if spec.EndpointPickerRef == nil || spec.EndpointPickerRef.Name == "" {
		errs = append(errs, field.Required(p.Child("endpointPickerRef", "name"), "the endpoint picker the pool's traffic goes through"))
	}
	return errs
}

// validateLoRA checks the adapters' names: present, no path traversal, each
// once, none the base model's.
func validateLoRA(l *LoRASpec, baseModel string, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]int{}
	for i, a := range l.Adapters {
		np := p.Child("adapters").Index(i).Child("name")
		if a.Name == nil || *a.Name == "" {
			errs = append(errs, field.Required(np, "every adapter needs a name: requests select it by that name"))
			continue
		}
		name := *a.Name
		switch {
		case name == "." || name == "..":
			errs = append(errs, field.Invalid(np, name, `an adapter's name must not be "." or ".." (it is a directory name)`))
		case seen[name] > 0:
			errs = append(errs, field.Duplicate(np, name))
		case baseModel != "" && name == baseModel:
			errs = append(errs, field.Invalid(np, name, fmt.Sprintf("an adapter's name must differ from the base model's (%q)", baseModel)))
		}
		seen[name] = i + 1
		up := p.Child("adapters").Index(i).Child("uri")
		switch {
		case a.URI == "":
			errs = append(errs, field.Required(up, "every adapter needs a storage URI"))
		case hasTemplate(a.URI):
		default:
			if scheme, _, _ := strings.Cut(a.URI, "://"); !slices.Contains([]string{"hf", "s3", "pvc"}, scheme) {
				errs = append(errs, field.Invalid(up, a.URI, "a LoRA adapter is stored at an hf://, s3:// or pvc:// URI"))
			}
		}
	}
	return errs
}

// validateLoRAStorage checks that the adapters can reach the pod: the
// storage initializer downloads them, or mounts their claims.
func validateLoRAStorage(s *LLMInferenceServiceSpec) field.ErrorList {
	if s.Model.LoRA == nil || len(s.Model.LoRA.Adapters) == 0 || s.StorageInitializer == nil ||
		s.StorageInitializer.Enabled == nil || *s.StorageInitializer.Enabled {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "storageInitializer", "enabled"), false,
		"LoRA adapters need the storage initializer (to download hf:// and s3:// adapters, and to mount pvc:// ones): remove storageInitializer.enabled: false")}
}

// validateTraffic checks a routing group's fields: both or neither, and only
// with Gateway API routing.
func validateTraffic(r *RouterSpec) field.ErrorList {
	if r == nil || r.Route == nil || (r.Route.Group == nil && r.Route.Weight == nil) {
		return nil
	}
	p := field.NewPath("spec", "router", "route")
	if r.Ingress != nil {
		return field.ErrorList{field.Invalid(p.Child("group"), ptr.Deref(r.Route.Group, ""),
			"a routing group splits traffic with Gateway API routes, which router.ingress does not use: remove router.ingress")}
	}
	var errs field.ErrorList
	if r.Route.Group == nil {
		errs = append(errs, field.Required(p.Child("group"), "weight requires group"))
	}
	if r.Route.Weight == nil {
		errs = append(errs, field.Required(p.Child("weight"), "group requires weight"))
	}
	if len(errs) == 0 && r.Route.HTTP != nil && len(r.Route.HTTP.Refs) > 0 {
		errs = append(errs, field.Invalid(p.Child("group"), *r.Route.Group,
			"a routing group splits the traffic of the route Serval manages, not of your own routes (router.route.http.refs): remove the refs"))
	}
	return errs
}
