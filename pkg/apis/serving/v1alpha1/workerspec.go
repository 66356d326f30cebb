package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// WorkerSpec is a runtime's worker pods for multi-node predictors, KServe's
// workerSpec: the pod an InferenceService's workerSpec merges over, and the
// default sizes.
type WorkerSpec struct {
	ServingRuntimePodSpec `json:",inline"`
	// PipelineParallelSize is the default number of pipeline stages (1).
	PipelineParallelSize *int `json:"pipelineParallelSize,omitempty"`
	// TensorParallelSize is the default number of GPUs per layer (1).
	TensorParallelSize *int `json:"tensorParallelSize,omitempty"`
}

// MultiNodeExecutorBackendAnnotation on a runtime picks vLLM's executor of
// a multi-node predictor: "mp" (one node per pipeline stage, a stage's
// tensor parallel GPUs on it), else Ray (KServe's multinode/executor-backend).
const MultiNodeExecutorBackendAnnotation = "multinode/executor-backend"

// WorkerSpecOf decodes a runtime's workerSpec strictly; nil when unset.
func WorkerSpecOf(spec *ServingRuntimeSpec) (*WorkerSpec, error) {
	if spec.WorkerSpec == nil || len(spec.WorkerSpec.Raw) == 0 {
		return nil, nil
	}
	w := &WorkerSpec{}
	if err := tolerant.DecodeStrict(spec.WorkerSpec.Raw, w); err != nil {
		return nil, err
	}
	return w, nil
}

// validateWorkerSpec: a runtime's workerSpec decodes, has a worker
// container and sizes of at least 1.
func validateWorkerSpec(spec *ServingRuntimeSpec, path *field.Path) field.ErrorList {
	p := path.Child("workerSpec")
	w, err := WorkerSpecOf(spec)
	if err != nil {
		return field.ErrorList{field.Invalid(p, "", err.Error())}
	}
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	if len(w.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "the worker container of multi-node predictors"))
	}
	for name, v := range map[string]*int{"pipelineParallelSize": w.PipelineParallelSize, "tensorParallelSize": w.TensorParallelSize} {
		if v != nil && *v < 1 {
			errs = append(errs, field.Invalid(p.Child(name), *v, name+" cannot be less than 1"))
		}
	}
	return errs
}
