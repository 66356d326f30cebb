package bench

import (
	"context"
	"fmt"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/operator"
)

// runFloor creates, on a fresh cluster with no operator, the same
// InferenceServices and the children Serval made for them, with the same
// workers, and measures when their Deployments are available: what
// Kubernetes itself needs for the same result.
func runFloor(ctx context.Context, o Options, children map[string][]*unstructured.Unstructured) (*FloorResult, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	subj, err := subjectOf(o.Kind)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(o.Progress, "bench: starting a cluster for the floor")
	sb, err := startCluster(ctx, o.N, o.Dir, "floor", subj, o.Progress)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sb.Stop() }()
	c := sb.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(sb.Env.Config)
	if err != nil {
		return nil, err
	}
	if err := waitQuiet(ctx, cs, o.Progress); err != nil {
		return nil, err
	}
	stopPlay := play(ctx, subj, sb, o.Progress)
	defer stopPlay()
	sample, err := readObject(filepath.Join(root, subj.sample))
	if err != nil {
		return nil, err
	}
	deployments := 0
	objects := 0
	for _, objs := range children {
		objects += 1 + len(objs)
		for _, obj := range objs {
			if obj.GetKind() == "Deployment" {
				deployments++
			}
		}
	}
	watcher, err := client.NewWithWatch(sb.Env.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return nil, err
	}
	// A service is "ready" in the floor when its Deployment is available
	// (each sample but llm-router has one per service), and with a Gateway
	// played, when all its Deployments are and its route is accepted.
	available := func(obj client.Object) bool {
		dep, ok := obj.(*appsv1.Deployment)
		return ok && dep.Labels[subj.label] != "" && dep.Status.AvailableReplicas > 0
	}
	tracker := newReadyTracker(deployments, func(obj client.Object) string { return obj.GetName() }, available)
	if subj.play != nil {
		tracker = newReadyTracker(o.N, func(obj client.Object) string { return obj.GetLabels()[subj.label] }, func(obj client.Object) bool {
			route, ok := obj.(*gatewayv1.HTTPRoute)
			return available(obj) || ok && gatewayapi.NotReady(route) == ""
		})
		tracker.parts = deployments/o.N + 1
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() { _ = tracker.run(watchCtx, watcher, &appsv1.DeploymentList{}, Namespace) }()
	if subj.play != nil {
		go func() { _ = tracker.run(watchCtx, watcher, &gatewayv1.HTTPRouteList{}, Namespace) }()
	}
	span, err := startSpanCPU(sb)
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(o.Progress, "bench: creating %d objects for %d %ss with %d workers\n", objects, o.N, subj.kind, o.Workers)
	tracker.begin()
	err = parallel(ctx, o.N, o.Workers, func(ctx context.Context, i int) error {
		isvc := isvcFrom(sample, i)
		if err := c.Create(ctx, isvc); err != nil {
			return err
		}
		for _, child := range children[isvc.GetName()] {
			obj := child.DeepCopy()
			refs := obj.GetOwnerReferences()
			for j := range refs {
				refs[j].UID = isvc.GetUID()
			}
			obj.SetOwnerReferences(refs)
			if err := c.Create(ctx, obj); err != nil {
				return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tracker.wait(ctx, readyTimeout(o.N)); err != nil {
		return nil, fmt.Errorf("waiting for the Deployments: %w", err)
	}
	apiCPU, componentCPU, err := span.since()
	if err != nil {
		return nil, err
	}
	return &FloorResult{Ready: tracker.percentiles(), ObjectsPerISVC: float64(objects) / float64(o.N),
		APIServerCPUSeconds: apiCPU, ComponentsCPUSeconds: componentCPU}, nil
}
