package v1beta1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WorkerSpec is KServe's multi-node predictor (spec.predictor.workerSpec):
// the worker pods that join the predictor's head pod, each on its own node,
// and the parallelism the model is split by.
type WorkerSpec struct {
	corev1.PodSpec `json:",inline"`
	// PipelineParallelSize is the number of stages the model's layers are
	// split into; with vLLM's mp backend, the number of nodes. 1 when unset
	// (or the runtime's).
	PipelineParallelSize *int `json:"pipelineParallelSize,omitempty"`
	// TensorParallelSize is the number of GPUs each layer is split across;
	// with the mp backend, the GPUs per node. 1 when unset (or the
	// runtime's).
	TensorParallelSize *int `json:"tensorParallelSize,omitempty"`
}

// The environment KServe gives a multi-node predictor's pods.
const (
	TensorParallelSizeEnv   = "TENSOR_PARALLEL_SIZE"
	PipelineParallelSizeEnv = "PIPELINE_PARALLEL_SIZE"
	RayNodeCountEnv         = "RAY_NODE_COUNT"
	RequestGPUCountEnv      = "REQUEST_GPU_COUNT"
)

// GPUResourceTypesAnnotation lists, as a JSON array, GPU resource names
// beyond the known ones (KServe's serving.kserve.io/gpu-resource-types).
const GPUResourceTypesAnnotation = "serving.serval.dev/gpu-resource-types"

// KnownGPUResourceTypes are the GPU resource names a multi-node predictor
// may request without the annotation, KServe's list.
var KnownGPUResourceTypes = []corev1.ResourceName{"nvidia.com/gpu", "amd.com/gpu", "intel.com/gpu", "habana.ai/gaudi"}

// WorkerSpecOf decodes the predictor's workerSpec strictly; nil when unset.
func WorkerSpecOf(p *PredictorSpec) (*WorkerSpec, error) {
	if p.WorkerSpec == nil || len(p.WorkerSpec.Raw) == 0 {
		return nil, nil
	}
	w := &WorkerSpec{}
	if err := decodeStrict(p.WorkerSpec.Raw, w); err != nil {
		return nil, err
	}
	return w, nil
}

// GPUResourceTypes are the GPU resource names an InferenceService may
// request: the known ones and those of its annotation.
func GPUResourceTypes(isvc *InferenceService) ([]corev1.ResourceName, error) {
	out := slices.Clone(KnownGPUResourceTypes)
	raw, ok := isvc.Annotations[GPUResourceTypesAnnotation]
	if !ok {
		return out, nil
	}
	var extra []string
	if err := json.Unmarshal([]byte(raw), &extra); err != nil {
		return nil, fmt.Errorf("is not a JSON array of resource names: %v", err)
	}
	for _, e := range extra {
		out = append(out, corev1.ResourceName(e))
	}
	return out, nil
}

// unknownResources are the resources a container asks for that are
// neither CPU, memory, storage nor a GPU the InferenceService may request.
func unknownResources(r corev1.ResourceRequirements, gpus []corev1.ResourceName) []string {
	basic := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage}
	var out []string
	for _, list := range []corev1.ResourceList{r.Limits, r.Requests} {
		for name := range list {
			if !slices.Contains(basic, name) && !slices.Contains(gpus, name) && !slices.Contains(out, string(name)) {
				out = append(out, string(name))
			}
		}
	}
	slices.Sort(out)
	return out
}

// validateWorkerSpec checks a multi-node predictor, KServe's rules: one
// worker container; the sizes at least 1 and not set through the model's
// environment; GPUs of known resource names; a model on a claim or in an
// image (every node mounts it); the autoscaler none (the node count is
// fixed by the sizes); and Standard mode (Knative cannot run the head and
// workers as one).
func validateWorkerSpec(isvc *InferenceService, mode DeploymentMode) field.ErrorList {
	p := &isvc.Spec.Predictor
	path := field.NewPath("spec", "predictor", "workerSpec")
	w, err := WorkerSpecOf(p)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	if mode != Standard {
		errs = append(errs, field.Forbidden(path, "a multi-node predictor runs in Standard mode: set "+DeploymentModeAnnotation+": Standard"))
	}
	if len(isvc.Spec.Canary) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "canary"), "a multi-node predictor has no canaries: its head and workers find each other by the InferenceService's generation"))
	}
	if p.CanaryTrafficPercent != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "predictor", "canaryTrafficPercent"), "a multi-node predictor rolls out whole: remove canaryTrafficPercent"))
	}
	if len(w.Containers) > 1 {
		errs = append(errs, field.TooMany(path.Child("containers"), len(w.Containers), 1))
	}
	for name, v := range map[string]*int{"pipelineParallelSize": w.PipelineParallelSize, "tensorParallelSize": w.TensorParallelSize} {
		if v != nil && *v < 1 {
			errs = append(errs, field.Invalid(path.Child(name), *v, name+" cannot be less than 1"))
		}
	}
	gpus, err := GPUResourceTypes(isvc)
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(GPUResourceTypesAnnotation), isvc.Annotations[GPUResourceTypesAnnotation], err.Error()))
	}
	for i, c := range w.Containers {
		if unknown := unknownResources(c.Resources, gpus); len(unknown) > 0 {
			errs = append(errs, field.Invalid(path.Child("containers").Index(i).Child("resources"), strings.Join(unknown, ", "),
				"not a GPU resource Serval knows: list custom GPU resources in the "+GPUResourceTypesAnnotation+" annotation (a JSON array)"))
		}
	}
	if m := p.Model; m != nil {
		mp := field.NewPath("spec", "predictor", "model")
		for _, env := range []string{PipelineParallelSizeEnv, TensorParallelSizeEnv} {
			if slices.ContainsFunc(m.Env, func(e corev1.EnvVar) bool { return e.Name == env }) {
				errs = append(errs, field.Forbidden(mp.Child("env"), env+" is set by Serval from workerSpec: set workerSpec's size instead"))
			}
		}
		if unknown := unknownResources(m.Resources, gpus); len(unknown) > 0 {
			errs = append(errs, field.Invalid(mp.Child("resources"), strings.Join(unknown, ", "),
				"not a GPU resource Serval knows: list custom GPU resources in the "+GPUResourceTypesAnnotation+" annotation (a JSON array)"))
		}
		switch uri := m.StorageURI; {
		case uri == nil:
			errs = append(errs, field.Required(mp.Child("storageUri"), "a multi-node predictor needs the model's storageUri (pvc:// or oci://): every node mounts it"))
		case !strings.HasPrefix(*uri, "pvc://") && !strings.HasPrefix(*uri, "oci://"):
			scheme, _, _ := strings.Cut(*uri, "://")
			errs = append(errs, field.Invalid(mp.Child("storageUri"), *uri,
				fmt.Sprintf("a multi-node predictor mounts its model on every node: use pvc:// or oci://, not %s://", scheme)))
		}
		if class := isvc.Annotations[AutoscalerClassAnnotation]; class != string(AutoscalerNone) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(AutoscalerClassAnnotation), class,
				"a multi-node predictor runs a fixed number of nodes: set the autoscaler class to none"))
		}
	}
	return errs
}
