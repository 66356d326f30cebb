package v1beta1

import "strings"

// Default applies Serval's defaulting to isvc in place. It is pure (no config,
// no API calls) and idempotent. The mutating webhook calls it, and so does the
// reconciler on a copy, so an object that never passed the webhook gets the
// same treatment.
//
//   - A legacy framework key (sklearn:, onnx:, ...) becomes model.modelFormat
//     with the key as the format name, when it is the only implementation.
//   - A deployment-mode annotation with a legacy or mis-cased value is
//     normalised to Standard or Knative.
//   - The protocol is v2 where KServe's defaulting makes it v2 (see
//     DefaultProtocol); otherwise it stays unset for runtime selection,
//     which picks v1 whenever a runtime serves the format over v1.
func Default(isvc *InferenceService) {
	defaultPredictor(&isvc.Spec.Predictor)
	for i := range isvc.Spec.Canary {
		defaultPredictor(&isvc.Spec.Canary[i].Predictor)
	}
	if value, ok := isvc.Annotations[DeploymentModeAnnotation]; ok {
		if mode, known := NormalizeDeploymentMode(value); known && string(mode) != value {
			isvc.Annotations[DeploymentModeAnnotation] = string(mode)
		}
	}
}

// defaultPredictor defaults one predictor: the stable one or a canary's.
func defaultPredictor(p *PredictorSpec) {
	legacy := defaultFrameworkKey(p)
	if m := p.Model; m != nil && m.ProtocolVersion == nil {
		if proto := DefaultProtocol(m.ModelFormat.Name, legacy); proto != "" {
			m.ProtocolVersion = &proto
		}
	}
	for i := range p.StorageURIs {
		if p.StorageURIs[i].MountPath == "" {
			// The CRD's default, for an object read before it applied.
			p.StorageURIs[i].MountPath = "/mnt/models"
		}
	}
}

// defaultFrameworkKey turns the one legacy framework key into model and
// returns the key's name ("" when there was none to convert).
func defaultFrameworkKey(p *PredictorSpec) string {
	if p.Model != nil || len(p.Implementations()) != 1 {
		// Nothing to convert, or an ambiguous spec that validation rejects.
		return ""
	}
	for _, f := range p.frameworks() {
		if legacy := *f.spec; legacy != nil {
			p.Model = &ModelSpec{ModelFormat: ModelFormat{Name: f.name}, PredictorExtensionSpec: *legacy}
			*f.spec = nil
			return f.name
		}
	}
	return ""
}

// DefaultProtocol is the protocol KServe's defaulting gives a model with no
// protocolVersion, when it is not v1: v2 for the model formats triton and
// vLLM, and for the legacy keys triton:, onnx: and huggingface: (legacyKey
// is the key the model came from, if any). "" leaves the choice to runtime
// selection, which keeps KServe's v1 whenever a runtime serves the format
// over v1, and otherwise (onnx through model:, which KServe cannot serve)
// picks the best runtime of any protocol.
func DefaultProtocol(format, legacyKey string) Protocol {
	switch {
	case legacyKey == "triton", legacyKey == "onnx", legacyKey == "huggingface":
		return ProtocolV2
	case legacyKey != "":
		return ""
	case strings.EqualFold(format, "triton"), strings.EqualFold(format, "vllm"):
		return ProtocolV2
	}
	return ""
}
