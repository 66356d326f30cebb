package presets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// Source reads what a service's presets name.
type Source interface {
	// Config returns the named preset from the service's namespace, else
	// from Serval's (a namespace's own preset of a name wins); nil when
	// neither has it.
	Config(ctx context.Context, name string) (*v1alpha2.LLMInferenceServiceConfig, error)
}

// Result is a service combined with its presets.
type Result struct {
	// Spec is the spec Serval renders.
	Spec v1alpha2.LLMInferenceServiceSpec
	// Applied are the presets merged, lowest precedence first.
	Applied []v1alpha2.AppliedConfigRef
}

// NotFoundError is a preset that neither the service's namespace nor
// Serval's holds.
type NotFoundError struct {
	Name       string
	Namespaces []string
}

// Error names the preset and where it was looked for.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("LLMInferenceServiceConfig %s is not in namespace %s", e.Name, strings.Join(e.Namespaces, " or "))
}

// PresetError is a preset that could not be used: its spec does not
// decode, does not merge, or its templates do not render.
type PresetError struct {
	Name string
	Err  error
}

// Error names the preset.
func (e *PresetError) Error() string {
	return fmt.Sprintf("LLMInferenceServiceConfig %s: %v", e.Name, e.Err)
}

// Unwrap is the cause.
func (e *PresetError) Unwrap() error { return e.Err }

// ReadError is a failure to read a preset from the API server:
// transient, unlike the other errors of Combine, which are the presets'.
type ReadError struct{ Err error }

// Error is the cause's.
func (e *ReadError) Error() string { return e.Err.Error() }

// Unwrap is the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// Combine merges a service (defaulted, see v1alpha2.Default) with its
// presets: the well-known ones its shape calls for (once its baseRefs are
// merged, since they may change its shape), then its baseRefs, then its own
// spec; renders their templates; and settles the references between the
// parts. namespaces are the service's and Serval's, for messages.
func Combine(ctx context.Context, svc *v1alpha2.LLMInferenceService, src Source, g Global, namespaces []string) (Result, error) {
	svc = svc.DeepCopy()
	// The shape, with the baseRefs merged, decides the well-known presets.
	shaped, baseSpecs, err := withBaseRefs(ctx, svc, src, namespaces)
	if err != nil {
		return Result{}, err
	}
	if shaped.Model.Name != nil {
		svc.Spec.Model.Name = shaped.Model.Name
	}
	pool := PoolName(svc, shaped.Router)
	data := templateData(svc, g, pool)
	var res Result
	var specs []v1alpha2.LLMInferenceServiceSpec
	for _, name := range WellKnown(&shaped) {
		cfg, err := load(ctx, src, name, namespaces)
		if err != nil {
			return Result{}, err
		}
		spec, err := render(cfg.Spec, data, name, g.TemplateLimits)
		if err != nil {
			return Result{}, &PresetError{Name: name, Err: err}
		}
		specs = append(specs, spec)
		res.Applied = append(res.Applied, v1alpha2.AppliedConfigRef{Name: name, Namespace: cfg.Namespace, Source: v1alpha2.AppliedConfigSourcePreset})
	}
	for i, ref := range svc.Spec.BaseRefs {
		spec, err := render(baseSpecs[i].Spec, data, ref.Name, g.TemplateLimits)
		if err != nil {
			return Result{}, &PresetError{Name: ref.Name, Err: err}
		}
		specs = append(specs, spec)
		res.Applied = append(res.Applied, v1alpha2.AppliedConfigRef{Name: ref.Name, Namespace: baseSpecs[i].Namespace, Source: v1alpha2.AppliedConfigSourceUserRef})
	}
	own, err := render(svc.Spec, data, svc.Name, g.TemplateLimits)
	if err != nil {
		return Result{}, fmt.Errorf("the service's own spec: %w", err)
	}
	if res.Spec, err = Merge(append(specs, own)...); err != nil {
		return Result{}, err
	}
	settle(svc, &res.Spec)
	routeAdapters(&res.Spec, svc.Namespace, g.ModelBasedRoutingHeaderName)
	return res, nil
}

// withBaseRefs loads the service's baseRefs and returns its spec with them
// merged under it.
func withBaseRefs(ctx context.Context, svc *v1alpha2.LLMInferenceService, src Source, namespaces []string) (v1alpha2.LLMInferenceServiceSpec, []*v1alpha2.LLMInferenceServiceConfig, error) {
	var specs []v1alpha2.LLMInferenceServiceSpec
	var cfgs []*v1alpha2.LLMInferenceServiceConfig
	for _, ref := range svc.Spec.BaseRefs {
		cfg, err := load(ctx, src, ref.Name, namespaces)
		if err != nil {
			return v1alpha2.LLMInferenceServiceSpec{}, nil, err
		}
		cfgs = append(cfgs, cfg)
		specs = append(specs, cfg.Spec)
	}
	merged, err := Merge(append(specs, svc.Spec)...)
	if err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, nil, err
	}
	return merged, cfgs, nil
}

// load reads a preset, or says why it cannot be used.
func load(ctx context.Context, src Source, name string, namespaces []string) (*v1alpha2.LLMInferenceServiceConfig, error) {
	cfg, err := src.Config(ctx, name)
	if err != nil {
		return nil, &ReadError{err}
	}
	if cfg == nil {
		return nil, &NotFoundError{Name: name, Namespaces: namespaces}
	}
	if cfg.DecodeError != "" {
		return nil, &PresetError{Name: name, Err: errors.New("its spec does not decode: " + cfg.DecodeError)}
	}
	return cfg, nil
}

// settle fills in what the parts of a merged spec leave to each other, as
// KServe does: the pool selects the model pods, the picker runs as its own
// ServiceAccount, the route attaches to the Gateways named in
// router.gateway, the route's pool backends point at the workload's Service
// when there is no scheduler and at the user's pool when there is one, and
// the picker's port is 9002.
func settle(svc *v1alpha2.LLMInferenceService, spec *v1alpha2.LLMInferenceServiceSpec) {
	r := spec.Router
	if r == nil {
		return
	}
	s := r.Scheduler
	if s != nil && s.Pool != nil && s.Pool.Spec != nil && len(s.Pool.Spec.Selector.MatchLabels) == 0 {
		s.Pool.Spec.Selector.MatchLabels = map[igwapi.LabelKey]igwapi.LabelValue{}
		for k, v := range WorkloadSelector(svc.Name) {
			s.Pool.Spec.Selector.MatchLabels[igwapi.LabelKey(k)] = igwapi.LabelValue(v)
		}
	}
	if s != nil && s.Template != nil && s.Template.ServiceAccountName == "" {
		s.Template.ServiceAccountName = EPPServiceAccountName(svc.Name)
	}
	if r.Route != nil && r.Route.HTTP != nil && r.Route.HTTP.Spec != nil {
		route := r.Route.HTTP.Spec
		if r.Gateway != nil && len(r.Gateway.Refs) > 0 {
			route.ParentRefs = parentRefs(r.Gateway.Refs)
		}
		pointBackends(route, svc, s)
	}
	if s != nil && s.Pool != nil && s.Pool.Spec != nil && s.Pool.Spec.EndpointPickerRef != nil {
		ref := s.Pool.Spec.EndpointPickerRef
		if (ref.Kind == "" || ref.Kind == "Service") && (ref.Port == nil || ref.Port.Number == 0) {
			ref.Port = &igwapi.Port{Number: defaultEndpointPickerPort}
		}
	}
}

// pointBackends points the route's backends that name the pool Serval
// would make: at the workload's Service without a scheduler, at the user's
// pool when the scheduler uses one.
func pointBackends(route *gwapiv1.HTTPRouteSpec, svc *v1alpha2.LLMInferenceService, s *v1alpha2.SchedulerSpec) {
	own := InferencePoolName(svc.Name)
	for i := range route.Rules {
		for j := range route.Rules[i].BackendRefs {
			b := &route.Rules[i].BackendRefs[j].BackendRef
			if ptr.Deref(b.Kind, "") != "InferencePool" || string(b.Name) != own {
				continue
			}
			switch {
			case s == nil:
				b.Group, b.Kind = ptr.To[gwapiv1.Group](""), ptr.To[gwapiv1.Kind]("Service")
				b.Name = gwapiv1.ObjectName(WorkloadServiceName(svc.Name))
			case s.Pool.HasRef():
				b.Name = gwapiv1.ObjectName(s.Pool.Ref.Name)
			}
		}
	}
}

// parentRefs are the route's parents for the Gateways of router.gateway.
func parentRefs(refs []v1alpha2.GatewayObjectReference) []gwapiv1.ParentReference {
	out := make([]gwapiv1.ParentReference, 0, len(refs))
	for _, r := range refs {
		p := gwapiv1.ParentReference{Name: gwapiv1.ObjectName(r.Name),
			Group: ptr.To[gwapiv1.Group]("gateway.networking.k8s.io"), Kind: ptr.To[gwapiv1.Kind]("Gateway")}
		if r.SectionName != nil {
			p.SectionName = ptr.To(gwapiv1.SectionName(*r.SectionName))
		}
		if r.Namespace != "" {
			p.Namespace = ptr.To(gwapiv1.Namespace(r.Namespace))
		}
		out = append(out, p)
	}
	return out
}

// routeAdapters routes each LoRA adapter by the model-name header as the
// base model is routed: every match of the managed route on the header
// gets a copy for each adapter's publisher-qualified name.
func routeAdapters(spec *v1alpha2.LLMInferenceServiceSpec, namespace, header string) {
	r := spec.Router
	if header == "" || spec.Model.LoRA == nil || len(spec.Model.LoRA.Adapters) == 0 ||
		r == nil || r.Route == nil || r.Route.HTTP == nil || r.Route.HTTP.Spec == nil {
		return
	}
	names := make([]string, 0, len(spec.Model.LoRA.Adapters))
	for _, a := range spec.Model.LoRA.Adapters {
		if a.Name != nil {
			names = append(names, *a.Name)
		}
	}
	slices.Sort(names)
	for i := range r.Route.HTTP.Spec.Rules {
		rule := &r.Route.HTTP.Spec.Rules[i]
		var added []gwapiv1.HTTPRouteMatch
		for _, m := range rule.Matches {
			if !slices.ContainsFunc(m.Headers, func(h gwapiv1.HTTPHeaderMatch) bool { return string(h.Name) == header }) {
				continue
			}
			for _, name := range names {
				c := *m.DeepCopy()
				for h := range c.Headers {
					if string(c.Headers[h].Name) == header {
						c.Headers[h].Value = "publishers/" + namespace + "/models/" + name
					}
				}
				added = append(added, c)
			}
		}
		rule.Matches = append(rule.Matches, added...)
	}
}
