package v1beta1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

func TestDefault(t *testing.T) {
	tests := []struct {
		name string
		in   *InferenceService
		want *InferenceService
	}{
		{
			name: "legacy sklearn key becomes model.modelFormat",
			in:   makeISVC(withLegacySKLearn()),
			want: makeISVC(),
		},
		{
			name: "legacy onnx key keeps its fields and gets KServe's v2",
			in: makeISVC(withPredictor(func(p *PredictorSpec) {
				p.Model = nil
				p.ONNX = &PredictorExtensionSpec{StorageURI: ptr.To("s3://m/onnx"), RuntimeVersion: ptr.To("24.01")}
			})),
			want: makeISVC(withPredictor(func(p *PredictorSpec) {
				p.Model = &ModelSpec{ModelFormat: ModelFormat{Name: "onnx"},
					PredictorExtensionSpec: PredictorExtensionSpec{StorageURI: ptr.To("s3://m/onnx"), RuntimeVersion: ptr.To("24.01"), ProtocolVersion: ptr.To(ProtocolV2)}}
			})),
		},
		{
			name: "model format triton gets v2",
			in:   makeISVC(withPredictor(func(p *PredictorSpec) { p.Model.ModelFormat.Name = "triton" })),
			want: makeISVC(withPredictor(func(p *PredictorSpec) {
				p.Model.ModelFormat.Name = "triton"
				p.Model.ProtocolVersion = ptr.To(ProtocolV2)
			})),
		},
		{
			name: "a given protocol is kept",
			in: makeISVC(withPredictor(func(p *PredictorSpec) {
				p.Model.ModelFormat.Name = "triton"
				p.Model.ProtocolVersion = ptr.To(ProtocolGRPCV2)
			})),
			want: makeISVC(withPredictor(func(p *PredictorSpec) {
				p.Model.ModelFormat.Name = "triton"
				p.Model.ProtocolVersion = ptr.To(ProtocolGRPCV2)
			})),
		},
		{
			name: "two legacy keys are left for validation to reject",
			in: makeISVC(withLegacySKLearn(), withPredictor(func(p *PredictorSpec) {
				p.XGBoost = &PredictorExtensionSpec{}
			})),
			want: makeISVC(withLegacySKLearn(), withPredictor(func(p *PredictorSpec) {
				p.XGBoost = &PredictorExtensionSpec{}
			})),
		},
		{
			name: "RawDeployment is normalised to Standard",
			in:   makeISVC(withAnnotation(DeploymentModeAnnotation, "RawDeployment")),
			want: makeISVC(withAnnotation(DeploymentModeAnnotation, "Standard")),
		},
		{
			name: "Serverless is normalised to Knative",
			in:   makeISVC(withAnnotation(DeploymentModeAnnotation, "Serverless")),
			want: makeISVC(withAnnotation(DeploymentModeAnnotation, "Knative")),
		},
		{
			name: "an unknown mode is left for validation to reject",
			in:   makeISVC(withAnnotation(DeploymentModeAnnotation, "Sideways")),
			want: makeISVC(withAnnotation(DeploymentModeAnnotation, "Sideways")),
		},
		{
			name: "custom containers stay custom",
			in:   makeISVC(withPredictor(func(p *PredictorSpec) { p.Model = nil }), withTransformer()),
			want: makeISVC(withPredictor(func(p *PredictorSpec) { p.Model = nil }), withTransformer()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.DeepCopy()
			Default(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Default() mismatch (-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			Default(again)
			assert.Equal(t, got, again, "Default is idempotent")
		})
	}
}

func TestDefaultedLegacyIsValid(t *testing.T) {
	isvc := makeISVC(withLegacySKLearn())
	Default(isvc)
	require.Empty(t, Validate(isvc, ValidationOptions{}))
}

// TestDefaultProtocol: exactly the formats and legacy keys KServe defaults
// to v2; everything else left to runtime selection.
func TestDefaultProtocol(t *testing.T) {
	tests := []struct {
		format, legacy string
		want           Protocol
	}{
		{"triton", "", ProtocolV2},
		{"vLLM", "", ProtocolV2},
		{"onnx", "", ""},
		{"sklearn", "", ""},
		{"huggingface", "", ""},
		{"triton", "triton", ProtocolV2},
		{"onnx", "onnx", ProtocolV2},
		{"huggingface", "huggingface", ProtocolV2},
		{"sklearn", "sklearn", ""},
		{"pytorch", "pytorch", ""},
		{"tensorflow", "tensorflow", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DefaultProtocol(tt.format, tt.legacy), "format %s, legacy key %q", tt.format, tt.legacy)
	}
}
