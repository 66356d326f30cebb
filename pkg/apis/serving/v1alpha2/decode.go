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
	var full llmInferenceServiceFields
	var partial struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Status            LLMInferenceServiceStatus `json:"status,omitempty"`
	}
	decodeErr, err := tolerant.Decode(data, &full, &partial)
	switch {
	case err != nil:
		return err
	case decodeErr == "":
		*in = LLMInferenceService(full)
	default:
		*in = LLMInferenceService{TypeMeta: partial.TypeMeta, ObjectMeta: partial.ObjectMeta, Status: partial.Status, DecodeError: decodeErr}
	}
	return nil
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
	var full llmInferenceServiceConfigFields
	var partial struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Status            LLMInferenceServiceConfigStatus `json:"status,omitempty"`
	}
	decodeErr, err := tolerant.Decode(data, &full, &partial)
	switch {
	case err != nil:
		return err
	case decodeErr == "":
		*in = LLMInferenceServiceConfig(full)
	default:
		*in = LLMInferenceServiceConfig{TypeMeta: partial.TypeMeta, ObjectMeta: partial.ObjectMeta, Status: partial.Status, DecodeError: decodeErr}
	}
	return nil
}

// StrictTarget returns what strict decoding decodes into.
func (in *LLMInferenceServiceConfig) StrictTarget() any {
	return (*llmInferenceServiceConfigFields)(in)
}

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *LLMInferenceServiceConfig) SpecDecodeError() string { return in.DecodeError }
