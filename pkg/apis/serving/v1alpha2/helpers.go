package v1alpha2

import "strings"

// IsPipelineParallel reports whether the workload splits the model's layers
// across nodes.
func (p *ParallelismSpec) IsPipelineParallel() bool {
	return p != nil && p.Pipeline != nil && *p.Pipeline > 0
}

// IsDataParallel reports whether the workload runs data-parallel ranks.
func (p *ParallelismSpec) IsDataParallel() bool {
	return p != nil && (p.Data != nil && *p.Data > 0 || p.DataLocal != nil && *p.DataLocal > 0)
}

// Size is the total parallelism: tensor × pipeline × data, each 1 when unset.
func (p *ParallelismSpec) Size() int32 {
	if p == nil {
		return 1
	}
	size := int32(1)
	for _, v := range []*int32{p.Tensor, p.Pipeline, p.Data} {
		if v != nil && *v > 0 {
			size *= *v
		}
	}
	return size
}

// hasTemplate reports whether s holds a Go template action, rendered when
// the presets are merged: it cannot be checked before.
func hasTemplate(s string) bool { return strings.Contains(s, "{{") }

// ModelName is the name requests use for the model: spec.model.name, else
// the service's name.
func (in *LLMInferenceService) ModelName() string {
	if n := in.Spec.Model.Name; n != nil && *n != "" {
		return *n
	}
	return in.Name
}
