package v1beta1

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidationOptions carries what validation needs beyond the object.
type ValidationOptions struct {
	// DefaultDeploymentMode is the mode of an InferenceService without the
	// deployment-mode annotation (serval-config's deploy.defaultDeploymentMode).
	DefaultDeploymentMode DeploymentMode
	// DeployedMode, when set, is the mode the InferenceService runs in
	// (status.deploymentMode, which never changes): rules are checked against
	// it whatever the annotation says.
	DeployedMode DeploymentMode
}

// modeFor is the mode the rules apply to.
func (o ValidationOptions) modeFor(isvc *InferenceService) DeploymentMode {
	if o.DeployedMode != "" {
		return o.DeployedMode
	}
	return DeploymentModeOf(isvc, o.DefaultDeploymentMode)
}

// knativeRevisionSuffix is the suffix Knative adds to a Service's name to name
// its revisions; the result must still be a DNS label.
const knativeRevisionSuffix = "-00001"

// notSupportedYet is the message for KServe fields Serval keeps in its types
// but does not implement: rejected rather than silently ignored.
func notSupportedYet(path *field.Path) *field.Error {
	return field.Forbidden(path, path.String()+" is not supported by Serval yet")
}

// Validate checks an InferenceService and returns every problem found, each
// naming its field. The spec is expected to be defaulted (see Default).
func Validate(isvc *InferenceService, opts ValidationOptions) field.ErrorList {
	if opts.DefaultDeploymentMode == "" {
		opts.DefaultDeploymentMode = Standard
	}
	var errs field.ErrorList
	errs = append(errs, validateMetadata(isvc)...)
	errs = append(errs, validatePredictor(&isvc.Spec.Predictor, field.NewPath("spec", "predictor"))...)
	mode := opts.modeFor(isvc)
	class := AutoscalerClassOf(isvc, mode)
	for _, c := range isvc.Spec.Components() {
		path := field.NewPath("spec", string(c))
		errs = append(errs, validateExtension(isvc.Spec.Extension(c), path, mode, class)...)
		errs = append(errs, validateCanaryTrafficPercent(isvc, c, isvc.Spec.Extension(c), path, mode)...)
		errs = append(errs, validateContainerNames(isvc.Spec.Pod(c), path)...)
		if c != PredictorComponent && len(isvc.Spec.Pod(c).Containers) == 0 {
			errs = append(errs, field.Required(path.Child("containers"), "a "+string(c)+" needs at least one container"))
		}
	}
	errs = append(errs, validateCanaries(isvc, mode)...)
	errs = append(errs, validateWorkerSpec(isvc, mode)...)
	if isvc.Spec.Explainer != nil && isvc.Spec.Explainer.ART != nil {
		errs = append(errs, notSupportedYet(field.NewPath("spec", "explainer", "art")))
	}
	return errs
}

func validateMetadata(isvc *InferenceService) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	for _, msg := range validation.IsDNS1035Label(isvc.Name) {
		errs = append(errs, field.Invalid(name, isvc.Name, msg))
	}
	for _, c := range isvc.Spec.Components() {
		child := ChildName(isvc.Name, c)
		if c == PredictorComponent {
			child = PredictorChildName(isvc.Name, isvc.Spec.Predictor.Name)
		}
		if n := len(child) + len(knativeRevisionSuffix); n > validation.DNS1035LabelMaxLength {
			errs = append(errs, field.Invalid(name, isvc.Name, fmt.Sprintf(
				"too long: the %s's revision name %q would be %d characters; names must fit 63, so shorten the name by %d",
				c, child+knativeRevisionSuffix, n, n-validation.DNS1035LabelMaxLength)))
		}
	}
	if value, ok := isvc.Annotations[DeploymentModeAnnotation]; ok {
		if _, known := NormalizeDeploymentMode(value); !known {
			errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(DeploymentModeAnnotation),
				value, []string{string(Standard), string(Knative), string(LegacyRawDeployment), string(LegacyServerless)}))
		}
	}
	if value, ok := isvc.Annotations[AutoscalerClassAnnotation]; ok {
		path := field.NewPath("metadata", "annotations").Key(AutoscalerClassAnnotation)
		switch AutoscalerClass(strings.ToLower(value)) {
		case AutoscalerHPA, AutoscalerKPA, AutoscalerNone, AutoscalerExternal:
		case AutoscalerKEDA:
			if DeploymentModeOf(isvc, Standard) == Knative {
				errs = append(errs, field.Forbidden(path, "autoscalerClass keda scales a Deployment: it needs Standard mode (Knative scales its own)"))
			}
		default:
			errs = append(errs, field.NotSupported(path, value, []string{"hpa", "kpa", "none", "external", "keda"}))
		}
	}
	return errs
}

func validatePredictor(p *PredictorSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch impl := p.Implementations(); len(impl) {
	case 0:
		errs = append(errs, field.Required(path, "the predictor needs exactly one of model, a framework key (sklearn, onnx, ...) or containers"))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, strings.Join(impl, ", "),
			"the predictor needs exactly one implementation; found "+strings.Join(impl, " and ")))
	}
	if len(p.StorageURIs) > 0 && p.Model != nil && (p.Model.StorageURI != nil || p.Model.Storage != nil) {
		errs = append(errs, field.Invalid(path.Child("storageUris"), len(p.StorageURIs),
			"storageUris and model.storageUri (or model.storage) are exclusive: list every model in storageUris"))
	}
	for _, f := range p.frameworks() {
		if *f.spec != nil {
			errs = append(errs, validateExtensionContainer(*f.spec, path.Child(f.name))...)
		}
	}
	if p.Model != nil {
		errs = append(errs, validateExtensionContainer(&p.Model.PredictorExtensionSpec, path.Child("model"))...)
		if p.Model.Runtime != nil && *p.Model.Runtime == "" {
			errs = append(errs, field.Invalid(path.Child("model", "runtime"), "", "must name a runtime when set"))
		}
	}
	return errs
}

func validateExtensionContainer(e *PredictorExtensionSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.StorageURI != nil && e.Storage != nil && e.Storage.StorageKey != nil {
		errs = append(errs, field.Invalid(path.Child("storage"), "key", "set either storageUri or storage.key, not both"))
	}
	return errs
}

func validateExtension(ext *ComponentExtensionSpec, path *field.Path, mode DeploymentMode, class AutoscalerClass) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateAgent(ext, path)...)
	errs = append(errs, validateAutoScaling(ext, path, class)...)
	errs = append(errs, validateReplicas(ext, path, mode, class)...)
	if ext.DeploymentStrategy != nil && mode != Standard {
		errs = append(errs, field.Forbidden(path.Child("deploymentStrategy"), "deploymentStrategy applies to Standard mode only"))
	}
	errs = append(errs, validateStrategy(ext.DeploymentStrategy, path.Child("deploymentStrategy"))...)
	if ext.TimeoutSeconds != nil && *ext.TimeoutSeconds < 1 {
		errs = append(errs, field.Invalid(path.Child("timeout"), *ext.TimeoutSeconds, "must be at least 1 second"))
	}
	if ext.ContainerConcurrency != nil && *ext.ContainerConcurrency < 0 {
		errs = append(errs, field.Invalid(path.Child("containerConcurrency"), *ext.ContainerConcurrency, "must be 0 (unlimited) or more"))
	}
	return append(errs, validateScaleMetric(ext, path, class)...)
}

func validateReplicas(ext *ComponentExtensionSpec, path *field.Path, mode DeploymentMode, class AutoscalerClass) field.ErrorList {
	var errs field.ErrorList
	minReplicas := int32(1)
	if ext.MinReplicas != nil {
		minReplicas = *ext.MinReplicas
		if minReplicas < 0 {
			errs = append(errs, field.Invalid(path.Child("minReplicas"), minReplicas, "must be 0 or more"))
		}
		if minReplicas == 0 && mode == Standard && class == AutoscalerHPA {
			errs = append(errs, field.Invalid(path.Child("minReplicas"), minReplicas,
				"scale to zero needs Knative mode or autoscalerClass keda; an HPA keeps at least 1 replica (or set autoscalerClass none)"))
		}
	}
	if ext.MaxReplicas < 0 {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), ext.MaxReplicas, "must be 0 (the mode's default) or more"))
	} else if ext.MaxReplicas > 0 && ext.MaxReplicas < minReplicas {
		errs = append(errs, field.Invalid(path.Child("maxReplicas"), ext.MaxReplicas,
			fmt.Sprintf("must be at least minReplicas (%d)", minReplicas)))
	}
	if ext.ScaleTarget != nil && *ext.ScaleTarget < 1 {
		errs = append(errs, field.Invalid(path.Child("scaleTarget"), *ext.ScaleTarget, "must be at least 1"))
	}
	return append(errs, validateScaleTargetRange(ext, path, class)...)
}

// validateScaleTargetRange applies KServe's range to an HPA's scaleTarget:
// with the cpu metric (the default) it is a utilisation percentage, 1 to
// 100. KServe's check, as written, also refuses a memory target over 100
// (its operator precedence); Serval reads a memory target as KServe
// documents it, MiB of at least 1.
func validateScaleTargetRange(ext *ComponentExtensionSpec, path *field.Path, class AutoscalerClass) field.ErrorList {
	if class != AutoscalerHPA || ext.ScaleTarget == nil {
		return nil
	}
	if (ext.ScaleMetric == nil || *ext.ScaleMetric == ScaleMetricCPU) && *ext.ScaleTarget > 100 {
		return field.ErrorList{field.Invalid(path.Child("scaleTarget"), *ext.ScaleTarget,
			"the target utilization percentage should be a [1-100] integer: the HPA holds the pods' average CPU at this percentage of their request")}
	}
	return nil
}

func validateScaleMetric(ext *ComponentExtensionSpec, path *field.Path, class AutoscalerClass) field.ErrorList {
	if ext.ScaleMetric == nil {
		return nil
	}
	metric := *ext.ScaleMetric
	var allowed []string
	switch class {
	case AutoscalerHPA:
		allowed = []string{string(ScaleMetricCPU), string(ScaleMetricMemory)}
	case AutoscalerKPA:
		allowed = []string{string(ScaleMetricConcurrency), string(ScaleMetricRPS)}
	default:
		return nil
	}
	for _, a := range allowed {
		if string(metric) == a {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(path.Child("scaleMetric"), metric, fmt.Sprintf(
		"the %s autoscaler scales on %s, not %s", class, strings.Join(allowed, " or "), metric))}
}

// ValidateUpdate checks an update. It ratchets: a problem the old object
// already had at the same field does not block the update, so objects that
// older rules let in never get stuck. The deployment mode may not change once
// the InferenceService has been deployed (status.deploymentMode set).
func ValidateUpdate(old, updated *InferenceService, opts ValidationOptions) field.ErrorList {
	if opts.DefaultDeploymentMode == "" {
		opts.DefaultDeploymentMode = Standard
	}
	errs := Ratchet(Validate(old, opts), Validate(updated, opts))
	if deployed := old.Status.DeploymentMode; deployed != "" {
		if mode, ok := NormalizeDeploymentMode(string(deployed)); ok {
			if now := DeploymentModeOf(updated, opts.DefaultDeploymentMode); now != mode {
				errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(DeploymentModeAnnotation),
					fmt.Sprintf("the deployment mode cannot change from %s to %s once deployed; create a new InferenceService instead", mode, now)))
			}
		}
	}
	return errs
}

// Ratchet returns the errors of the updated object that the old object did
// not already have at the same field with the same type.
func Ratchet(old, updated field.ErrorList) field.ErrorList {
	already := map[string]bool{}
	for _, e := range old {
		already[ratchetKey(e)] = true
	}
	var errs field.ErrorList
	for _, e := range updated {
		if !already[ratchetKey(e)] {
			errs = append(errs, e)
		}
	}
	return errs
}

func ratchetKey(e *field.Error) string {
	return string(e.Type) + "|" + e.Field
}

// validateContainerNames: every container and init container needs a name
// that is a DNS-1123 label, as the API server checks on the Deployment or
// Knative Service (where the message would be harder to trace back).
func validateContainerNames(pod *PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"containers", pod.Containers}, {"initContainers", pod.InitContainers}} {
		for i, c := range list.containers {
			p := path.Child(list.name).Index(i).Child("name")
			if c.Name == "" {
				errs = append(errs, field.Required(p, "every container needs a name"))
				continue
			}
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p, c.Name, msg))
			}
		}
	}
	return errs
}

// validateStrategy checks a rolling update's maxSurge and maxUnavailable as
// the API server checks the Deployment's: a count of 0 or more, or a
// percent such as "25%".
func validateStrategy(s *appsv1.DeploymentStrategy, path *field.Path) field.ErrorList {
	if s == nil || s.RollingUpdate == nil {
		return nil
	}
	var errs field.ErrorList
	zero := 0
	for _, v := range []struct {
		name  string
		value *intstr.IntOrString
	}{{"maxSurge", s.RollingUpdate.MaxSurge}, {"maxUnavailable", s.RollingUpdate.MaxUnavailable}} {
		if v.value == nil {
			continue
		}
		p := path.Child("rollingUpdate", v.name)
		switch {
		case v.value.Type == intstr.String && len(validation.IsValidPercent(v.value.StrVal)) > 0:
			errs = append(errs, field.Invalid(p, v.value.StrVal, `must be a count (0, 1, ...) or a percent such as "25%"; a number in quotes is not a count`))
		case v.value.Type == intstr.Int && v.value.IntVal < 0:
			errs = append(errs, field.Invalid(p, v.value.IntVal, "must be 0 or more"))
		case v.value.Type == intstr.Int && v.value.IntVal == 0, v.value.Type == intstr.String && v.value.StrVal == "0%":
			zero++
		}
	}
	if zero == 2 {
		errs = append(errs, field.Invalid(path.Child("rollingUpdate", "maxUnavailable"), 0, "may not be 0 when maxSurge is 0 too: the rollout could never start"))
	}
	return errs
}
