package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// llmInferenceServiceFields is LLMInferenceService without its UnmarshalJSON.
type llmInferenceServiceFields LLMInferenceService

// UnmarshalJSON decodes an LLMInferenceService without ever failing on its
// spec: a stored spec that does not decode (its pod templates are
// schemaless in the CRD) leaves Spec empty and sets DecodeError, so that one
// bad object cannot stop every LLMInferenceService from being listed.
func (in *LLMInferenceService) UnmarshalJSON(data []byte) error {
	return tolerant.DecodeObject(data, func(f *llmInferenceServiceFields) { *in = LLMInferenceService(*f) },
		func(tm metav1.TypeMeta, om metav1.ObjectMeta, st LLMInferenceServiceStatus, problem string) {
			*in = LLMInferenceService{TypeMeta: tm, ObjectMeta: om, Status: st, DecodeError: problem}
		})
}

// StrictTarget returns what strict decoding decodes into: the fields
// without the tolerance of UnmarshalJSON.
func (in *LLMInferenceService) StrictTarget() any { return (*llmInferenceServiceFields)(in) }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *LLMInferenceService) SpecDecodeError() string { return in.DecodeError }

// llmInferenceServiceConfigFields is LLMInferenceServiceConfig without its
// UnmarshalJSON.
type llmInferenceServiceConfigFields LLMInferenceServiceConfig

// UnmarshalJSON decodes a preset without ever failing on its spec, as
// LLMInferenceService's does.
func (in *LLMInferenceServiceConfig) UnmarshalJSON(data []byte) error {
	return tolerant.DecodeObject(data, func(f *llmInferenceServiceConfigFields) { *in = LLMInferenceServiceConfig(*f) },
		func(tm metav1.TypeMeta, om metav1.ObjectMeta, st LLMInferenceServiceConfigStatus, problem string) {
			*in = LLMInferenceServiceConfig{TypeMeta: tm, ObjectMeta: om, Status: st, DecodeError: problem}
		})
}

// StrictTarget returns what strict decoding decodes into.
func (in *LLMInferenceServiceConfig) StrictTarget() any {
	return (*llmInferenceServiceConfigFields)(in)
}

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *LLMInferenceServiceConfig) SpecDecodeError() string { return in.DecodeError }
