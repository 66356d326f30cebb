package v1beta1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fixedReplicasMessage is why a canary takes no autoscaling field.
const fixedReplicasMessage = "a canary runs fixed replicas: set minReplicas, or leave it unset to follow the canary's traffic share"

// MaxCanaries is the most entries spec.canary may have (the CRD's
// maxItems too): each is a Deployment and a Service, and a progressive
// rollout needs a few.
const MaxCanaries = 16

// validateCanaries applies KServe's rules for spec.canary, each problem at
// its field. A list over MaxCanaries is refused alone, before any entry is
// checked.
func validateCanaries(isvc *InferenceService, mode DeploymentMode) field.ErrorList {
	spec := &isvc.Spec
	if len(spec.Canary) == 0 {
		return nil
	}
	path := field.NewPath("spec", "canary")
	if len(spec.Canary) > MaxCanaries {
		return field.ErrorList{field.TooMany(path, len(spec.Canary), MaxCanaries)}
	}
	var errs field.ErrorList
	if mode != Standard {
		errs = append(errs, field.Forbidden(path, "spec.canary needs Standard mode; in Knative mode canaryTrafficPercent splits traffic between revisions"))
	}
	if spec.Predictor.Model == nil {
		errs = append(errs, field.Forbidden(path, "spec.canary needs a stable predictor with a model (model: or a framework key such as sklearn:); custom containers have no canary"))
	}
	if spec.Predictor.CanaryTrafficPercent != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "predictor", "canaryTrafficPercent"),
			"canaryTrafficPercent and spec.canary are two ways to split traffic: use one"))
	}
	names := map[string]bool{}
	var total int32
	for i := range spec.Canary {
		c := &spec.Canary[i]
		p := path.Index(i).Child("predictor")
		total += c.TrafficPercent
		if c.TrafficPercent < 0 || c.TrafficPercent > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("trafficPercent"), c.TrafficPercent, "must be between 0 and 100"))
		}
		errs = append(errs, validateCanaryName(isvc, c.Predictor.Name, p.Child("name"), names)...)
		errs = append(errs, validatePredictor(&c.Predictor, p)...)
		errs = append(errs, validateContainerNames(&c.Predictor.PodSpec, p)...)
		errs = append(errs, validateCanaryScaling(spec, i, p)...)
	}
	if total > 100 {
		errs = append(errs, field.Invalid(path, total, fmt.Sprintf("the canaries' trafficPercent add up to %d; at most 100", total)))
	}
	return errs
}

// validateCanaryName: required, a DNS label that names a Deployment of at
// most 63 characters, unique, and not the stable predictor's.
func validateCanaryName(isvc *InferenceService, name string, path *field.Path, seen map[string]bool) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "a canary needs a name: it names its Deployment and Service ({isvc}-{name}-predictor)")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if child := PredictorChildName(isvc.Name, name); len(child) > validation.DNS1035LabelMaxLength {
		errs = append(errs, field.Invalid(path, name, fmt.Sprintf(
			"too long: the canary's Deployment %q would be %d characters; names must fit %d",
			child, len(child), validation.DNS1035LabelMaxLength)))
	}
	switch {
	case seen[name]:
		errs = append(errs, field.Duplicate(path, name))
	case name == isvc.Spec.Predictor.Name:
		errs = append(errs, field.Invalid(path, name, "is the stable predictor's name; a canary needs its own"))
	}
	seen[name] = true
	return errs
}

// validateCanaryScaling: no autoscaling, no revision split of its own, and
// no more replicas than the stable predictor's minimum.
func validateCanaryScaling(spec *InferenceServiceSpec, i int, path *field.Path) field.ErrorList {
	ext := &spec.Canary[i].Predictor.ComponentExtensionSpec
	var errs field.ErrorList
	if ext.MaxReplicas != 0 {
		errs = append(errs, field.Forbidden(path.Child("maxReplicas"), fixedReplicasMessage))
	}
	if ext.ScaleTarget != nil {
		errs = append(errs, field.Forbidden(path.Child("scaleTarget"), fixedReplicasMessage))
	}
	if ext.ScaleMetric != nil {
		errs = append(errs, field.Forbidden(path.Child("scaleMetric"), fixedReplicasMessage))
	}
	if ext.AutoScaling != nil {
		errs = append(errs, field.Forbidden(path.Child("autoScaling"), fixedReplicasMessage))
	}
	if ext.CanaryTrafficPercent != nil {
		errs = append(errs, field.Forbidden(path.Child("canaryTrafficPercent"), "a canary's share is its entry's trafficPercent"))
	}
	if m := ext.MinReplicas; m != nil && *m > spec.stableMinReplicas() {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), *m,
			fmt.Sprintf("must not exceed the stable predictor's minReplicas (%d)", spec.stableMinReplicas())))
	}
	return errs
}

// validateCanaryTrafficPercent checks a component's canaryTrafficPercent:
// 0..100, and in Standard mode only on the predictor, whose latest
// revision then runs as {isvc}-predictor-canary.
func validateCanaryTrafficPercent(isvc *InferenceService, c ComponentType, ext *ComponentExtensionSpec, path *field.Path, mode DeploymentMode) field.ErrorList {
	if ext.CanaryTrafficPercent == nil {
		return nil
	}
	p := path.Child("canaryTrafficPercent")
	var errs field.ErrorList
	if v := *ext.CanaryTrafficPercent; v < 0 || v > 100 {
		errs = append(errs, field.Invalid(p, v, "must be between 0 and 100"))
	}
	if mode != Standard {
		return errs
	}
	if c != PredictorComponent {
		return append(errs, field.Forbidden(p, "in Standard mode only the predictor splits traffic with canaryTrafficPercent"))
	}
	if name := CanaryRevisionName(isvc.Name); len(name) > validation.DNS1035LabelMaxLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), isvc.Name, fmt.Sprintf(
			"too long for canaryTrafficPercent: the latest revision's Deployment %q would be %d characters; names must fit %d",
			name, len(name), validation.DNS1035LabelMaxLength)))
	}
	return errs
}
