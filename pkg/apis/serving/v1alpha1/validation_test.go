package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

func spec(formats ...SupportedModelFormat) *ServingRuntimeSpec {
	return &ServingRuntimeSpec{SupportedModelFormats: formats,
		ServingRuntimePodSpec: ServingRuntimePodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "i"}}}}
}

func format(name, version string, auto bool, prio int32) SupportedModelFormat {
	f := SupportedModelFormat{Name: name, AutoSelect: ptr.To(auto)}
	if version != "" {
		f.Version = ptr.To(version)
	}
	if prio > 0 {
		f.Priority = ptr.To(prio)
	}
	return f
}

func TestValidateSpec(t *testing.T) {
	tests := []struct {
		name string
		spec *ServingRuntimeSpec
		want []string
	}{
		{"valid", spec(format("sklearn", "1", true, 1)), nil},
		{"no containers", &ServingRuntimeSpec{}, []string{"spec.containers: Required value: a runtime needs at least one container"}},
		{"unnamed container", &ServingRuntimeSpec{ServingRuntimePodSpec: ServingRuntimePodSpec{Containers: []corev1.Container{{Image: "i"}}}},
			[]string{"spec.containers[0].name: Required value"}},
		{"format without a name", spec(format("", "", true, 1)), []string{"spec.supportedModelFormats[0].name: Required value"}},
		{"priority 0", spec(format("sklearn", "", true, 0), SupportedModelFormat{Name: "x", Priority: ptr.To[int32](0)}),
			[]string{"spec.supportedModelFormats[1].priority: Invalid value: 0: must be at least 1 when set"}},
		{"one format, two priorities", spec(format("sklearn", "1", true, 1), format("sklearn", "2", true, 2)),
			[]string{"model format sklearn already has priority 1 in this runtime"}},
		{"ModelMesh field", func() *ServingRuntimeSpec {
			s := spec(format("sklearn", "", true, 1))
			s.BuiltInAdapter = &apiextensionsv1.JSON{Raw: []byte(`{}`)}
			return s
		}(), []string{"spec.builtInAdapter: Forbidden: spec.builtInAdapter is not supported by Serval yet"}},
		{"a multi-node runtime", func() *ServingRuntimeSpec {
			s := spec(format("huggingface", "1", true, 2))
			s.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"pipelineParallelSize":1,"containers":[{"name":"worker-container","image":"i"}]}`)}
			return s
		}(), nil},
		{"a workerSpec without a container, a size of 0, a misspelt field", func() *ServingRuntimeSpec {
			s := spec(format("huggingface", "1", true, 2))
			s.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"tensorParallelSize":0}`)}
			return s
		}(), []string{"spec.workerSpec.containers: Required value: the worker container of multi-node predictors",
			"spec.workerSpec.tensorParallelSize: Invalid value: 0: tensorParallelSize cannot be less than 1"}},
		{"a misspelt workerSpec field", func() *ServingRuntimeSpec {
			s := spec(format("huggingface", "1", true, 2))
			s.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"containerz":[]}`)}
			return s
		}(), []string{`spec.workerSpec: Invalid value: "": does not decode`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateSpec(tt.spec)
			if !assert.Len(t, errs, len(tt.want), "%v", errs) {
				return
			}
			for i, w := range tt.want {
				assert.Contains(t, errs[i].Error(), w)
			}
		})
	}
}

func TestConflict(t *testing.T) {
	withProtocols := func(s *ServingRuntimeSpec, ps ...v1beta1.Protocol) *ServingRuntimeSpec {
		s.ProtocolVersions = ps
		return s
	}
	v1 := func(s *ServingRuntimeSpec) *ServingRuntimeSpec { return withProtocols(s, v1beta1.ProtocolV1) }
	disabled := v1(spec(format("sklearn", "1", true, 1)))
	disabled.Disabled = ptr.To(true)
	noPriority := spec(format("sklearn", "1", true, 1))
	noPriority.SupportedModelFormats[0].Priority = nil
	tests := []struct {
		name string
		a, b *ServingRuntimeSpec
		want string
	}{
		{"same slot", v1(spec(format("sklearn", "1", true, 1))), v1(spec(format("sklearn", "1", true, 1))),
			"both auto-select model format sklearn version 1 with priority 1 over protocol v1"},
		{"no protocols declared: none shared, as KServe judges", spec(format("sklearn", "1", true, 1)), spec(format("sklearn", "1", true, 1)), ""},
		{"one without a priority", v1(spec(format("sklearn", "1", true, 1))), v1(noPriority), ""},
		{"one without a version", v1(spec(format("sklearn", "1", true, 1))), v1(spec(format("sklearn", "", true, 1))), ""},
		{"different priority", spec(format("sklearn", "1", true, 1)), spec(format("sklearn", "1", true, 2)), ""},
		{"different version", spec(format("sklearn", "1", true, 1)), spec(format("sklearn", "2", true, 1)), ""},
		{"one not autoSelect", spec(format("sklearn", "1", true, 1)), spec(format("sklearn", "1", false, 1)), ""},
		{"disjoint protocols", withProtocols(spec(format("sklearn", "1", true, 1)), v1beta1.ProtocolV1),
			withProtocols(spec(format("sklearn", "1", true, 1)), v1beta1.ProtocolV2), ""},
		{"shared v2", withProtocols(spec(format("onnx", "", true, 3)), v1beta1.ProtocolV2, v1beta1.ProtocolGRPCV2),
			withProtocols(spec(format("onnx", "", true, 3)), v1beta1.ProtocolGRPCV2), "both auto-select model format onnx with priority 3 over protocol grpc-v2"},
		{"a disabled runtime", v1(spec(format("sklearn", "1", true, 1))), disabled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Conflict(tt.a, tt.b))
			assert.Equal(t, tt.want, Conflict(tt.b, tt.a), "symmetric")
		})
	}
}
