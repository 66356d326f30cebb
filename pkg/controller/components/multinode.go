package components

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
)

// Worker is the worker pods of a multi-node predictor (KServe's
// workerSpec): a second Deployment beside the head's, its pods joining the
// head's (a Ray cluster, or vLLM's mp backend) through two headless
// Services named after the InferenceService's generation.
type Worker struct {
	// PodSet is the worker pods: the Deployment {predictor}-worker, with
	// as many replicas as there are nodes beyond the head.
	PodSet
	// HeadService and WorkerService are the headless Services of the head
	// and worker pods of this generation; GenerationLabel's value selects
	// them.
	HeadService, WorkerService, Generation string
}

// GenerationLabel on a multi-node predictor's pods is the InferenceService
// generation they belong to, which the headless Services select (KServe's
// label).
const GenerationLabel = "isvc.generation"

// MultiNodeRoleLabel marks a multi-node predictor's headless Services as
// the head's or the workers' (KServe's label).
const MultiNodeRoleLabel = "multinode/role"

// defaultGPUResource is the GPU resource set when a container names none.
const defaultGPUResource corev1.ResourceName = "nvidia.com/gpu"

// addWorker makes the predictor multi-node when its workerSpec is set, as
// KServe does: the runtime's worker pod with the InferenceService's
// workerSpec over it; the node count and the GPUs of the head and of each
// worker from the sizes (see nodesAndGPUs); the environment KServe gives
// both; the model mounted on the workers too.
func addWorker(c *Component, isvc *v1beta1.InferenceService, in Inputs) error {
	ws, err := v1beta1.WorkerSpecOf(&isvc.Spec.Predictor)
	if err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "workerSpec " + err.Error()}
	}
	if ws == nil {
		return nil
	}
	if c.Runtime == nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "a workerSpec needs a model served by a runtime with a workerSpec (such as kserve-huggingfaceserver-multinode)"}
	}
	rt := c.Runtime.Runtime
	rtw, err := v1alpha1.WorkerSpecOf(rt.Spec)
	if err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, fmt.Sprintf("runtime %s's workerSpec %v", rt.Name, err)}
	}
	if rtw == nil {
		return &BuildError{c.Type, v1beta1.InvalidWorkerSpecNotSet, fmt.Sprintf(
			"you cannot set workerSpec in the InferenceService if the ServingRuntime does not have a workerSpec: runtime %s has none", rt.Name)}
	}
	if len(rtw.Containers) == 0 {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, fmt.Sprintf("runtime %s's workerSpec has no container", rt.Name)}
	}
	pp, tp := sizeOr(ws.PipelineParallelSize, rtw.PipelineParallelSize), sizeOr(ws.TensorParallelSize, rtw.TensorParallelSize)

	pod := *ws.PodSpec.DeepCopy()
	worker := *rtw.Containers[0].DeepCopy()
	if len(pod.Containers) > 0 {
		worker = overrideContainer(worker, pod.Containers[0])
	}
	pod.Containers = []corev1.Container{worker}
	mergeRuntimePod(&pod, &rtw.ServingRuntimePodSpec)
	if err := renderPlaceholders(&pod, isvc, in.Config.Templates); err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, err.Error()}
	}

	head := &c.Pod.Containers[0]
	gpus, err := v1beta1.GPUResourceTypes(isvc)
	if err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, v1beta1.GPUResourceTypesAnnotation + " " + err.Error()}
	}
	var nodes, workerGPUs, headGPUs int
	if rtw.Annotations[v1alpha1.MultiNodeExecutorBackendAnnotation] == "mp" {
		nodes, workerGPUs, headGPUs = pp, tp, tp
	} else {
		nodes, workerGPUs, headGPUs, err = nodesAndGPUs(tp*pp, gpuRequest(head.Resources, gpus), gpuRequest(worker.Resources, gpus))
		if err != nil {
			return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, err.Error()}
		}
	}

	gen := strconv.FormatInt(isvc.Generation, 10)
	w := &Worker{PodSet: PodSet{Name: c.Name + "-worker"}, Generation: gen,
		HeadService: isvc.Name + "-head-" + gen, WorkerService: isvc.Name + "-workers-" + gen}
	w.Scale(false, ptr.To(int32(nodes-1)))
	uri := StorageURIOf(isvc)
	setEnvs(head, map[string]string{v1beta1.PipelineParallelSizeEnv: strconv.Itoa(pp), v1beta1.TensorParallelSizeEnv: strconv.Itoa(tp),
		v1beta1.RayNodeCountEnv: strconv.Itoa(nodes), v1beta1.RequestGPUCountEnv: strconv.Itoa(headGPUs), "MODEL_NAME": isvc.Name})
	if strings.HasPrefix(uri, "pvc://") || strings.HasPrefix(uri, "oci://") {
		setEnvs(head, map[string]string{"MODEL_DIR": storage.DefaultMountPath})
	}
	setGPUs(head, headGPUs, gpus)
	setEnvs(&pod.Containers[0], map[string]string{v1beta1.RayNodeCountEnv: strconv.Itoa(nodes), v1beta1.RequestGPUCountEnv: strconv.Itoa(workerGPUs),
		v1beta1.PipelineParallelSizeEnv: strconv.Itoa(pp), v1beta1.TensorParallelSizeEnv: strconv.Itoa(tp),
		"ISVC_NAME": isvc.Name, "HEAD_SVC": w.HeadService, "WORKER_SVC": w.WorkerService})
	setGPUs(&pod.Containers[0], workerGPUs, gpus)

	// The workers mount the model too; on a claim or in an image, as
	// admission requires, it needs no credentials.
	wc := &Component{PodSet: PodSet{Name: w.Name, Pod: pod}, Type: c.Type, Owner: c.Owner}
	if uri != "" {
		if err := addStorage(wc, isvc, in, uri, storage.Credentials{}); err != nil {
			return err
		}
	}
	w.Pod = wc.Pod

	c.Labels[GenerationLabel] = gen
	w.Selector = maps.Clone(c.Selector)
	w.Selector[v1beta1.ComponentLabel] = c.Selector[v1beta1.ComponentLabel] + "-worker"
	w.Labels = maps.Clone(rtw.Labels)
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	maps.Copy(w.Labels, c.Labels)
	maps.Copy(w.Labels, w.Selector)
	w.Annotations = maps.Clone(rtw.Annotations)
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	maps.Copy(w.Annotations, c.Annotations)
	c.Worker = w
	return nil
}

func sizeOr(isvc, runtime *int) int {
	switch {
	case isvc != nil:
		return *isvc
	case runtime != nil:
		return *runtime
	}
	return 1
}

// nodesAndGPUs is KServe's Ray sizing: how many nodes (the head and the
// workers) serve total GPUs, and how many GPUs the head and each worker
// request, from what their containers request (0 when nothing):
//   - workers request some: as many nodes as total / worker GPUs, rounded
//     up, the head taking the rest unless it requests its own; the head
//     alone when it can hold them all;
//   - only the head requests some: single-GPU workers for the rest;
//   - neither: one GPU per node.
//
// Too few GPUs for total is an error, with the figures.
func nodesAndGPUs(total, head, worker int) (nodes, workerGPUs, headGPUs int, err error) {
	ceil := func(a, b int) int { return int(math.Ceil(float64(a) / float64(b))) }
	check := func(nodes, head, worker int) error {
		if total > head+worker*(nodes-1) {
			return fmt.Errorf("the sizes ask for %d GPUs (tensorParallelSize × pipelineParallelSize), but the head requests %d and the workers %d in all: raise the GPUs the containers request, or lower the sizes",
				total, head, worker*(nodes-1))
		}
		return nil
	}
	switch {
	case worker > 0:
		nodes = ceil(total, worker)
		if head > 0 {
			if ceil(total, head) == 1 {
				nodes = 1
			}
		} else {
			head = total - worker*(nodes-1)
		}
		if nodes == 1 {
			worker, head = 0, total
		}
		return nodes, worker, head, check(nodes, head, worker)
	case head > 0:
		nodes, worker = 1, 1
		if rest := total - head; rest > 0 {
			nodes = ceil(rest, worker) + 1
		}
		return nodes, worker, head, check(nodes, head, worker)
	}
	return total, 1, 1, nil
}

// gpuRequest is the GPUs a container requests, of the first of gpus (the
// GPU resources the InferenceService may use) it requests.
func gpuRequest(r corev1.ResourceRequirements, gpus []corev1.ResourceName) int {
	for _, name := range gpus {
		if q, ok := r.Requests[name]; ok {
			return int(q.Value())
		}
	}
	return 0
}

// setGPUs sets a container's GPU limit and request to n, of the GPU
// resource of gpus it names (nvidia.com/gpu when none), as KServe does.
func setGPUs(c *corev1.Container, n int, gpus []corev1.ResourceName) {
	name := defaultGPUResource
	for _, list := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
		for _, g := range gpus {
			if q, ok := list[g]; ok && !q.IsZero() {
				name = g
			}
		}
	}
	q := resource.MustParse(strconv.Itoa(n))
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Limits[name], c.Resources.Requests[name] = q, q
}

// setEnvs sets environment variables, replacing those of the same name.
func setEnvs(c *corev1.Container, env map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		c.Env = mergeEnv(c.Env, []corev1.EnvVar{{Name: name, Value: env[name]}})
	}
}
