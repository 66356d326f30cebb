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
	return tolerant.DecodeObject(data, func(f *inferenceServiceFields) { *in = InferenceService(*f) },
		func(tm metav1.TypeMeta, om metav1.ObjectMeta, st InferenceServiceStatus, problem string) {
			*in = InferenceService{TypeMeta: tm, ObjectMeta: om, Status: st, DecodeError: problem}
		})
}

// StrictTarget returns what strict decoding (the webhook's check for unknown
// fields) decodes into: the InferenceService's fields without the tolerance
// of UnmarshalJSON.
func (in *InferenceService) StrictTarget() any { return (*inferenceServiceFields)(in) }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *InferenceService) SpecDecodeError() string { return in.DecodeError }
