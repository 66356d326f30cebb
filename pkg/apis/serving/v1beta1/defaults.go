package v1beta1

// Default applies Serval's defaulting to isvc in place. It is pure (no config,
// no API calls) and idempotent. The mutating webhook calls it, and so does the
// reconciler on a copy, so an object that never passed the webhook gets the
// same treatment.
//
//   - A legacy framework key (sklearn:, onnx:, ...) becomes model.modelFormat
//     with the key as the format name, when it is the only implementation.
//   - A deployment-mode annotation with a legacy or mis-cased value is
//     normalised to Standard or Knative.
//
// The protocol is deliberately not defaulted: runtime selection chooses it.
func Default(isvc *InferenceService) {
	defaultFrameworkKey(&isvc.Spec.Predictor)
	if value, ok := isvc.Annotations[DeploymentModeAnnotation]; ok {
		if mode, known := NormalizeDeploymentMode(value); known && string(mode) != value {
			isvc.Annotations[DeploymentModeAnnotation] = string(mode)
		}
	}
}

func defaultFrameworkKey(p *PredictorSpec) {
	if p.Model != nil || len(p.Implementations()) != 1 {
		// Nothing to convert, or an ambiguous spec that validation rejects.
		return
	}
	for _, f := range p.frameworks() {
		if legacy := *f.spec; legacy != nil {
			p.Model = &ModelSpec{ModelFormat: ModelFormat{Name: f.name}, PredictorExtensionSpec: *legacy}
			*f.spec = nil
			return
		}
	}
}
