package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// runtimeHead is what always decodes of a runtime: its type and metadata.
// It is a function's result, not a named struct, so that the CRD generator
// does not take it for a kind of its own.
func runtimeHead() *struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
} {
	return &struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}{}
}

// servingRuntimeFields is ServingRuntime without its UnmarshalJSON.
type servingRuntimeFields ServingRuntime

// UnmarshalJSON decodes a ServingRuntime without ever failing on its spec: a
// stored spec that does not decode leaves Spec empty and sets DecodeError, so
// that one bad runtime cannot stop every runtime (and with them every
// InferenceService) from being read.
func (in *ServingRuntime) UnmarshalJSON(data []byte) error {
	var full servingRuntimeFields
	head := runtimeHead()
	decodeErr, err := tolerant.Decode(data, &full, head)
	switch {
	case err != nil:
		return err
	case decodeErr == "":
		*in = ServingRuntime(full)
	default:
		*in = ServingRuntime{TypeMeta: head.TypeMeta, ObjectMeta: head.ObjectMeta, DecodeError: decodeErr}
	}
	return nil
}

// StrictTarget returns what strict decoding decodes into: the runtime's
// fields without the tolerance of UnmarshalJSON.
func (in *ServingRuntime) StrictTarget() any { return (*servingRuntimeFields)(in) }

// clusterServingRuntimeFields is ClusterServingRuntime without its UnmarshalJSON.
type clusterServingRuntimeFields ClusterServingRuntime

// UnmarshalJSON decodes a ClusterServingRuntime as ServingRuntime's does.
func (in *ClusterServingRuntime) UnmarshalJSON(data []byte) error {
	var full clusterServingRuntimeFields
	head := runtimeHead()
	decodeErr, err := tolerant.Decode(data, &full, head)
	switch {
	case err != nil:
		return err
	case decodeErr == "":
		*in = ClusterServingRuntime(full)
	default:
		*in = ClusterServingRuntime{TypeMeta: head.TypeMeta, ObjectMeta: head.ObjectMeta, DecodeError: decodeErr}
	}
	return nil
}

// StrictTarget returns what strict decoding decodes into: the runtime's
// fields without the tolerance of UnmarshalJSON.
func (in *ClusterServingRuntime) StrictTarget() any { return (*clusterServingRuntimeFields)(in) }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *ServingRuntime) SpecDecodeError() string { return in.DecodeError }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *ClusterServingRuntime) SpecDecodeError() string { return in.DecodeError }
