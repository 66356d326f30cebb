package webhook

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// Offline is admission's verdict on one manifest from the rules that need
// nothing of a cluster beyond its settings (cfg) and its
// ClusterStorageContainers (scs): unknown or mistyped fields, a spec that
// does not decode, and each kind's own rules, on the object defaulted as
// the mutating webhook would. What needs the cluster's other objects (a
// runtime's peers, the caches a group holds, the requester's rights) is
// left out. serval migrate reports exactly this, so that what it calls
// blocking is what the webhooks refuse. known is false for a kind without
// offline rules.
func Offline(kind string, doc []byte, cfg *config.Config, scs []v1alpha1.ClusterStorageContainer) (warnings []string, errs field.ErrorList, known bool) {
	switch kind {
	case "InferenceService":
		isvc := &v1beta1.InferenceService{}
		errs, decoded := decodeFor(doc, isvc)
		if !decoded {
			return nil, errs, true
		}
		v1beta1.Default(isvc)
		return nil, append(errs, validate(isvc, cfg, scs)...), true
	case "ServingRuntime", "ClusterServingRuntime":
		var spec *v1alpha1.ServingRuntimeSpec
		var errs field.ErrorList
		var decoded bool
		if kind == "ServingRuntime" {
			sr := &v1alpha1.ServingRuntime{}
			errs, decoded = decodeFor(doc, sr)
			spec = &sr.Spec
		} else {
			csr := &v1alpha1.ClusterServingRuntime{}
			errs, decoded = decodeFor(doc, csr)
			spec = &csr.Spec
		}
		if !decoded {
			return nil, errs, true
		}
		errs = append(errs, v1alpha1.ValidateSpec(spec)...)
		return nil, append(errs, runtimeTemplateBombs(spec, cfg.Templates.OrDefaults())...), true
	case "InferenceGraph":
		ig := &v1alpha1.InferenceGraph{}
		if err := json.Unmarshal(doc, ig); err != nil {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "does not decode: "+err.Error())}, true
		}
		return nil, v1alpha1.ValidateInferenceGraph(ig, v1alpha1.DefaultGraphLimits), true
	case "LocalModelNodeGroup":
		g := &v1alpha1.LocalModelNodeGroup{}
		if err := json.Unmarshal(doc, g); err != nil {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "does not decode: "+err.Error())}, true
		}
		return nil, groupRules(g), true
	case "LLMInferenceService":
		svc := &v1alpha2.LLMInferenceService{}
		if errs, _ := decodeFor(doc, svc); errs != nil {
			return nil, errs, true
		}
		v1alpha2.Default(svc)
		warnings, _, errs := llmRulesRendered(svc, nil, cfg.Templates.OrDefaults())
		return warnings, errs, true
	case "LLMInferenceServiceConfig":
		c := &v1alpha2.LLMInferenceServiceConfig{}
		if errs, _ := decodeFor(doc, c); errs != nil {
			return nil, errs, true
		}
		return nil, LLMConfigRules(c), true
	}
	return nil, nil, false
}

// decodeFor decodes doc into obj (whose tolerant decoding keeps a spec
// that does not decode as its DecodeError) and strictly, as the webhooks
// do: the fields that are unknown or mistyped, and whether the spec
// decoded at all (the rules that read it can run).
func decodeFor[T any, PT interface {
	*T
	decodable
}](doc []byte, obj PT) (field.ErrorList, bool) {
	if err := json.Unmarshal(doc, obj); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "does not decode: "+err.Error())}, false
	}
	if msg := obj.SpecDecodeError(); msg != "" {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValueType{}, "does not decode: "+msg)}, false
	}
	var fresh T
	return strictDecodeErrors(doc, PT(&fresh).StrictTarget()), true
}
