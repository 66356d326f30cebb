package webhook

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/storage"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// +kubebuilder:webhook:path=/mutate-serving-serval-dev-v1alpha2-llminferenceservice,mutating=true,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=llminferenceservices,verbs=create;update,versions=v1alpha2,name=llminferenceservice.default.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha2-llminferenceservice,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=llminferenceservices,verbs=create;update,versions=v1alpha2,name=llminferenceservice.validate.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha2-llminferenceserviceconfig,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=llminferenceserviceconfigs,verbs=create;update,versions=v1alpha2,name=llminferenceserviceconfig.validate.serving.serval.dev,admissionReviewVersions=v1

// LLMInferenceService defaults and validates LLMInferenceServices: KServe's
// defaults and rules, fields that do not decode or are unknown, and the
// fields Serval does not implement yet, refused by name.
type LLMInferenceService struct {
	// Config holds the template bounds (nil: the defaults).
	Config *config.Store
	// Reviewer asks the API server about the requester's rights (see
	// routeRights); nil asks nothing.
	Reviewer client.Client
}

var (
	_ admission.Defaulter[*v1alpha2.LLMInferenceService] = LLMInferenceService{}
	_ admission.Validator[*v1alpha2.LLMInferenceService] = LLMInferenceService{}
)

var llmInferenceServiceKind = v1alpha2.GroupVersion.WithKind("LLMInferenceService").GroupKind()

// Default implements admission.Defaulter.
func (LLMInferenceService) Default(_ context.Context, svc *v1alpha2.LLMInferenceService) error {
	if svc.DecodeError == "" {
		v1alpha2.Default(svc)
	}
	return nil
}

// ValidateCreate implements admission.Validator.
func (w LLMInferenceService) ValidateCreate(ctx context.Context, svc *v1alpha2.LLMInferenceService) (admission.Warnings, error) {
	warnings, rendered, err := validateLLM(ctx, svc, nil, templateLimits(ctx, w.Config))
	if err != nil {
		return warnings, err
	}
	return warnings, invalidIf(llmInferenceServiceKind, svc.Name, routeRights(ctx, w.Reviewer, svc.Namespace, &rendered, nil))
}

// ValidateUpdate implements admission.Validator. An update that leaves the
// spec as it was (a label, a finalizer) is never refused for a rule the
// object broke before.
func (w LLMInferenceService) ValidateUpdate(ctx context.Context, old, svc *v1alpha2.LLMInferenceService) (admission.Warnings, error) {
	if svc.DeletionTimestamp != nil || apiequality.Semantic.DeepEqual(old.Spec, svc.Spec) {
		// A stop annotation is set by an update that leaves the spec.
		return v1beta1.StopWarnings(svc.Annotations), nil
	}
	limits := templateLimits(ctx, w.Config)
	warnings, rendered, err := validateLLM(ctx, svc, old, limits)
	if err != nil {
		return warnings, err
	}
	before, _ := llmTemplateBombs(old, limits)
	return warnings, invalidIf(llmInferenceServiceKind, svc.Name, routeRights(ctx, w.Reviewer, svc.Namespace, &rendered, &before))
}

// ValidateDelete implements admission.Validator.
func (LLMInferenceService) ValidateDelete(context.Context, *v1alpha2.LLMInferenceService) (admission.Warnings, error) {
	return nil, nil
}

// validateLLM runs admission's rules that need no requester and returns
// the spec as rendered, for those that do.
func validateLLM(ctx context.Context, svc, prev *v1alpha2.LLMInferenceService, limits strtemplate.Limits) (admission.Warnings, v1alpha2.LLMInferenceServiceSpec, error) {
	if errs := strictErrors(ctx, svc); len(errs) > 0 {
		return nil, svc.Spec, apierrors.NewInvalid(llmInferenceServiceKind, svc.Name, errs)
	}
	warnings, rendered, errs := llmRulesRendered(svc, prev, limits)
	if len(errs) > 0 {
		return warnings, rendered, apierrors.NewInvalid(llmInferenceServiceKind, svc.Name, errs)
	}
	return warnings, rendered, nil
}

// llmRulesRendered runs the template bounds and LLMRules on the spec as
// written and, where its templates change it, on the spec as rendered,
// which is what Serval applies: a rule the rendered spec alone breaks is
// refused too. It returns the rendered spec.
func llmRulesRendered(svc, prev *v1alpha2.LLMInferenceService, limits strtemplate.Limits) ([]string, v1alpha2.LLMInferenceServiceSpec, field.ErrorList) {
	warnings, errs := LLMRules(svc, prev)
	rendered, bombs := llmTemplateBombs(svc, limits)
	if len(bombs) > 0 || apiequality.Semantic.DeepEqual(rendered, svc.Spec) {
		return warnings, rendered, append(errs, bombs...)
	}
	after := svc.DeepCopy()
	after.Spec = rendered
	var before *v1alpha2.LLMInferenceService
	if prev != nil {
		before = prev.DeepCopy()
		before.Spec, _ = llmTemplateBombs(prev, limits)
	}
	seen := map[string]bool{}
	for _, e := range errs {
		seen[e.Error()] = true
	}
	_, more := LLMRules(after, before)
	for _, e := range more {
		if !seen[e.Error()] {
			e.Detail += " (as its templates render)"
			errs = append(errs, e)
		}
	}
	return warnings, rendered, errs
}

// LLMRules are admission's rules of an LLMInferenceService that need
// nothing of the cluster (KServe's, the storage URIs' form, the fields
// Serval does not implement): the webhook's, and serval migrate's, so that
// migrate reports exactly what admission would refuse. svc is defaulted.
func LLMRules(svc, prev *v1alpha2.LLMInferenceService) ([]string, field.ErrorList) {
	warnings, errs := v1alpha2.Validate(svc, prev)
	return warnings, append(errs, storage.CheckURIs(v1alpha2.StorageURIs(&svc.Spec))...)
}

// LLMConfigRules are admission's rules of a preset that need nothing of
// the cluster.
func LLMConfigRules(cfg *v1alpha2.LLMInferenceServiceConfig) field.ErrorList {
	return append(v1alpha2.ValidateConfig(cfg), storage.CheckURIs(v1alpha2.StorageURIs(&cfg.Spec))...)
}

// invalidIf is an Invalid error of errs, or nil when there are none.
func invalidIf(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// LLMInferenceServiceConfig validates presets: fields that do not decode or
// are unknown, and the rules that hold of any part of a spec.
type LLMInferenceServiceConfig struct {
	// Config holds the template bounds (nil: the defaults).
	Config *config.Store
	// Reviewer asks the API server about the requester's rights (see
	// routeRights); nil asks nothing.
	Reviewer client.Client
}

var _ admission.Validator[*v1alpha2.LLMInferenceServiceConfig] = LLMInferenceServiceConfig{}

// ValidateCreate implements admission.Validator.
func (w LLMInferenceServiceConfig) ValidateCreate(ctx context.Context, cfg *v1alpha2.LLMInferenceServiceConfig) (admission.Warnings, error) {
	return w.validate(ctx, cfg, nil)
}

// validate checks a preset; prev is its spec before an update. A preset's
// route spec becomes the route of every service that names it, so writing
// one needs the right to write HTTPRoutes as a service's does.
func (w LLMInferenceServiceConfig) validate(ctx context.Context, cfg *v1alpha2.LLMInferenceServiceConfig, prev *v1alpha2.LLMInferenceServiceSpec) (admission.Warnings, error) {
	errs := strictErrors(ctx, cfg)
	if len(errs) == 0 {
		errs = LLMConfigRules(cfg)
	}
	if len(errs) == 0 {
		// A preset renders over each service that uses it; one named after
		// the preset stands for them.
		svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Namespace: cfg.Namespace}, Spec: cfg.Spec}
		limits := templateLimits(ctx, w.Config)
		var rendered v1alpha2.LLMInferenceServiceSpec
		rendered, errs = llmTemplateBombs(svc, limits)
		if len(errs) == 0 && prev != nil {
			before := &v1alpha2.LLMInferenceService{ObjectMeta: svc.ObjectMeta, Spec: *prev}
			renderedPrev, _ := llmTemplateBombs(before, limits)
			prev = &renderedPrev
		}
		if len(errs) == 0 {
			errs = routeRights(ctx, w.Reviewer, cfg.Namespace, &rendered, prev)
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(v1alpha2.GroupVersion.WithKind("LLMInferenceServiceConfig").GroupKind(), cfg.Name, errs)
	}
	return nil, nil
}

// ValidateUpdate implements admission.Validator.
func (w LLMInferenceServiceConfig) ValidateUpdate(ctx context.Context, old, cfg *v1alpha2.LLMInferenceServiceConfig) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(old.Spec, cfg.Spec) {
		return nil, nil
	}
	return w.validate(ctx, cfg, &old.Spec)
}

// ValidateDelete implements admission.Validator.
func (LLMInferenceServiceConfig) ValidateDelete(context.Context, *v1alpha2.LLMInferenceServiceConfig) (admission.Warnings, error) {
	return nil, nil
}
