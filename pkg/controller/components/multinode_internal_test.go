package components

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestNodesAndGPUs: KServe's Ray sizing, from the GPUs the sizes ask for
// and those the head and worker containers request.
func TestNodesAndGPUs(t *testing.T) {
	tests := []struct {
		name                        string
		total, head, worker         int
		nodes, workerGPUs, headGPUs int
		wantErr                     string
	}{
		{name: "nothing requested: one GPU a node", total: 4, nodes: 4, workerGPUs: 1, headGPUs: 1},
		{name: "workers' GPUs set the nodes, the head takes the rest", total: 6, worker: 4, nodes: 2, workerGPUs: 4, headGPUs: 2},
		{name: "a head that holds them all runs alone", total: 4, head: 4, worker: 2, nodes: 1, workerGPUs: 0, headGPUs: 4},
		{name: "head and workers both set", total: 8, head: 4, worker: 4, nodes: 2, workerGPUs: 4, headGPUs: 4},
		{name: "only the head set: single-GPU workers for the rest", total: 5, head: 2, nodes: 4, workerGPUs: 1, headGPUs: 2},
		{name: "too few GPUs", total: 8, head: 1, worker: 4, nodes: 2, workerGPUs: 4, headGPUs: 1,
			wantErr: "the sizes ask for 8 GPUs (tensorParallelSize × pipelineParallelSize), but the head requests 1 and the workers 4 in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, w, h, err := nodesAndGPUs(tt.total, tt.head, tt.worker)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, []int{tt.nodes, tt.workerGPUs, tt.headGPUs}, []int{nodes, w, h})
		})
	}
}

// TestSetGPUs: the GPUs are set on the resource the container names, a
// custom one included (the gpu-resource-types annotation), else on
// nvidia.com/gpu.
func TestSetGPUs(t *testing.T) {
	custom := corev1.ResourceName("example.com/tpu")
	gpus := append(slices.Clone(v1beta1.KnownGPUResourceTypes), custom)
	c := &corev1.Container{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{custom: resource.MustParse("1")}}}
	setGPUs(c, 2, gpus)
	assert.Equal(t, corev1.ResourceList{custom: resource.MustParse("2")}, c.Resources.Limits)
	assert.Equal(t, corev1.ResourceList{custom: resource.MustParse("2")}, c.Resources.Requests)
	assert.Equal(t, 2, gpuRequest(c.Resources, gpus))
	assert.Equal(t, 0, gpuRequest(c.Resources, v1beta1.KnownGPUResourceTypes), "a resource the InferenceService may not use is not a GPU")

	plain := &corev1.Container{}
	setGPUs(plain, 1, gpus)
	assert.Equal(t, corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, plain.Resources.Limits)
}
