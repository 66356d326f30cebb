package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// servingRuntimeFields is ServingRuntime without its UnmarshalJSON.
type servingRuntimeFields ServingRuntime

// UnmarshalJSON decodes a ServingRuntime without ever failing on its spec: a
// stored spec that does not decode leaves Spec empty and sets DecodeError, so
// that one bad runtime cannot stop every runtime (and with them every
// InferenceService) from being read.
func (in *ServingRuntime) UnmarshalJSON(data []byte) error {
	return tolerant.DecodeObject(data, func(f *servingRuntimeFields) { *in = ServingRuntime(*f) },
		func(tm metav1.TypeMeta, om metav1.ObjectMeta, _ struct{}, problem string) {
			*in = ServingRuntime{TypeMeta: tm, ObjectMeta: om, DecodeError: problem}
		})
}

// StrictTarget returns what strict decoding decodes into: the runtime's
// fields without the tolerance of UnmarshalJSON.
func (in *ServingRuntime) StrictTarget() any { return (*servingRuntimeFields)(in) }

// clusterServingRuntimeFields is ClusterServingRuntime without its UnmarshalJSON.
type clusterServingRuntimeFields ClusterServingRuntime

// UnmarshalJSON decodes a ClusterServingRuntime as ServingRuntime's does.
func (in *ClusterServingRuntime) UnmarshalJSON(data []byte) error {
	return tolerant.DecodeObject(data, func(f *clusterServingRuntimeFields) { *in = ClusterServingRuntime(*f) },
		func(tm metav1.TypeMeta, om metav1.ObjectMeta, _ struct{}, problem string) {
			*in = ClusterServingRuntime{TypeMeta: tm, ObjectMeta: om, DecodeError: problem}
		})
}

// StrictTarget returns what strict decoding decodes into: the runtime's
// fields without the tolerance of UnmarshalJSON.
func (in *ClusterServingRuntime) StrictTarget() any { return (*clusterServingRuntimeFields)(in) }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *ServingRuntime) SpecDecodeError() string { return in.DecodeError }

// SpecDecodeError says why the stored spec did not decode, or "".
func (in *ClusterServingRuntime) SpecDecodeError() string { return in.DecodeError }
