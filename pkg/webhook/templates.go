package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// templateLimits are the bounds in force for rendering templates: the
// store's, or the defaults while it has none (or there is no store).
func templateLimits(ctx context.Context, store *config.Store) strtemplate.Limits {
	if store == nil {
		return strtemplate.DefaultLimits
	}
	cfg, _, err := store.Snapshot(ctx)
	if err != nil || cfg == nil {
		return strtemplate.DefaultLimits
	}
	return cfg.Templates.OrDefaults()
}

// templateBombs renders every string under spec that holds a template
// action with render, and refuses each that does not parse or whose render
// passed a bound of limits. Only those refuse: a template that reads a key the object lacks
// is the reconcile's to report, as KServe does, since the data it renders
// over is not all known here.
func templateBombs(root *field.Path, spec any, render func(text string) error) field.ErrorList {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil
	}
	var errs field.ErrorList
	eachString(root, doc, func(path *field.Path, s string) {
		if !strings.Contains(s, "{{") {
			return
		}
		var limit *strtemplate.LimitError
		var parse *strtemplate.ParseError
		switch err := render(s); {
		case errors.As(err, &limit):
			errs = append(errs, field.Invalid(path, truncate(s, 80), limit.Error()))
		case errors.As(err, &parse):
			errs = append(errs, field.Invalid(path, truncate(s, 80), "does not parse as a template (each string is a template of its own): "+parse.Error()))
		}
	})
	return errs
}

// runtimeTemplateBombs renders a runtime's strings as a predictor's pod
// gets them.
func runtimeTemplateBombs(spec *v1alpha1.ServingRuntimeSpec, limits strtemplate.Limits) field.ErrorList {
	data := components.PlaceholderData("", "", nil, nil)
	return templateBombs(field.NewPath("spec"), spec, func(s string) error {
		_, err := components.RenderPlaceholder(s, data, limits)
		return err
	})
}

// predictorTemplateBombs renders an InferenceService's predictor strings
// (its containers merge into the runtime's, placeholders and all) as its
// pod gets them.
func predictorTemplateBombs(path *field.Path, predictor *v1beta1.PredictorSpec, isvc *v1beta1.InferenceService, limits strtemplate.Limits) field.ErrorList {
	data := components.PlaceholderData(isvc.Name, isvc.Namespace, isvc.Labels, isvc.Annotations)
	return templateBombs(path, predictor, func(s string) error {
		_, err := components.RenderPlaceholder(s, data, limits)
		return err
	})
}

// llmTemplateBombs renders each string of an LLMInferenceService's (or a
// preset's) spec alone, to name the field of one that passes a bound, then
// all of them within one budget as a reconcile does (a bound passed only
// by them together is refused at spec), and returns the rendered spec.
func llmTemplateBombs(svc *v1alpha2.LLMInferenceService, limits strtemplate.Limits) (v1alpha2.LLMInferenceServiceSpec, field.ErrorList) {
	errs := templateBombs(field.NewPath("spec"), &svc.Spec, func(s string) error {
		return presets.CheckString(svc, s, limits)
	})
	if len(errs) > 0 {
		return svc.Spec, errs
	}
	rendered, err := presets.CheckSpec(svc, limits)
	var limit *strtemplate.LimitError
	if errors.As(err, &limit) {
		return svc.Spec, field.ErrorList{field.Invalid(field.NewPath("spec"), "(the templates of the whole spec)", limit.Error())}
	}
	if err != nil {
		// Not a bound: a template the reconcile reports (KServe admits
		// it); the rules run on the spec as written.
		return svc.Spec, nil
	}
	return rendered, nil
}

// eachString calls fn with every string of a decoded JSON document and
// its path, map keys in order.
func eachString(path *field.Path, v any, fn func(*field.Path, string)) {
	switch v := v.(type) {
	case string:
		fn(path, v)
	case []any:
		for i, item := range v {
			eachString(path.Index(i), item, fn)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			eachString(path.Child(k), v[k], fn)
		}
	}
}

// truncate shortens s for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
