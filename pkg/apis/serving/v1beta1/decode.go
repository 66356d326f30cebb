package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// inferenceServiceFields is InferenceService without its UnmarshalJSON: what
// a successful decode fills.
type inferenceServiceFields InferenceService

// UnmarshalJSON decodes an InferenceService without ever failing on its spec:
// a stored spec that does not decode (the CRD keeps pod fields schemaless)
// leaves Spec empty and sets DecodeError, so that one bad object cannot stop
// a list, and with it every InferenceService, from decoding.
func (in *InferenceService) UnmarshalJSON(data []byte) error {
	var full inferenceServiceFields
	var partial struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Status            InferenceServiceStatus `json:"status,omitempty"`
	}
	decodeErr, err := tolerant.Decode(data, &full, &partial)
	switch {
	case err != nil:
		return err
	case decodeErr == "":
		*in = InferenceService(full)
	default:
		*in = InferenceService{TypeMeta: partial.TypeMeta, ObjectMeta: partial.ObjectMeta, Status: partial.Status, DecodeError: decodeErr}
	}
	return nil
}

// StrictTarget returns what strict decoding (the webhook's check for unknown
// fields) decodes into: the InferenceService's fields without the tolerance
// of UnmarshalJSON.
func (in *InferenceService) StrictTarget() any { return (*inferenceServiceFields)(in) }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *InferenceService) SpecDecodeError() string { return in.DecodeError }
