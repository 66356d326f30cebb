package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// nodeAnnotation marks the nodes kwok manages.
const nodeAnnotation = "kwok.x-k8s.io/node"

// GPUResource is the extended resource the GPU nodes offer.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// NodeName returns the name of the i-th plain (gpu false) or GPU node.
func NodeName(i int, gpu bool) string {
	if gpu {
		return fmt.Sprintf("sandbox-gpu-%d", i)
	}
	return fmt.Sprintf("sandbox-node-%d", i)
}

// makeNode returns a fake node kwok will manage. Capacity is set at creation;
// kwok keeps it. CPU and memory are plenty (nothing runs): at least 1,000
// CPUs and 4 TiB, and 1 CPU and 4 GiB per pod it may hold, so that only the
// pod count limits how many model servers a node takes (a benchmark of 5,000
// InferenceServices places 2,600 1-CPU pods per node).
func makeNode(name string, pods int, gpus int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(max(1000, pods)), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(max(1024, pods))*4<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	if gpus > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{nodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

func (s *Sandbox) nodes() []*corev1.Node {
	var nodes []*corev1.Node
	for i := range s.opts.Nodes {
		nodes = append(nodes, makeNode(NodeName(i, false), s.opts.PodsPerNode, 0))
	}
	for i := range s.opts.GPUNodes {
		nodes = append(nodes, makeNode(NodeName(i, true), s.opts.PodsPerNode, 4))
	}
	return nodes
}

func capacityPatch(status corev1.NodeStatus) []byte {
	data, _ := json.Marshal(map[string]any{"status": map[string]any{
		"capacity": status.Capacity, "allocatable": status.Allocatable,
	}}) // resource lists always encode
	return data
}

func (s *Sandbox) createNodes(ctx context.Context) error {
	for _, n := range s.nodes() {
		status := n.Status
		if err := s.Client.Create(ctx, n); err != nil {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		// The API server drops status on create. kwok and the node controller
		// start writing the node at once, so patch the capacity without an
		// optimistic lock rather than update it.
		patch := client.RawPatch(types.MergePatchType, capacityPatch(status))
		if err := s.Client.Status().Patch(ctx, n, patch); err != nil {
			return fmt.Errorf("set capacity of node %s: %w", n.Name, err)
		}
	}
	return nil
}

// waitNodesReady waits until kwok has marked every fake node Ready.
func (s *Sandbox) waitNodesReady(ctx context.Context) error {
	s.progress("waiting for kwok to make the nodes Ready")
	want := s.opts.Nodes + max(s.opts.GPUNodes, 0)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &corev1.NodeList{}
		if err := s.Client.List(ctx, list); err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == want, nil
	})
	if err != nil {
		return fmt.Errorf("nodes not Ready (see %s/kwok.log): %w", s.LogDir(), err)
	}
	return nil
}
