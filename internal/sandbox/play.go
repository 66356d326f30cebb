package sandbox

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// PlayKnativeReady stands in for Knative's controller, which the sandbox
// does not run: it waits (up to timeout) for the Knative Service ns/name and
// writes the status Knative would once its first revision serves all
// traffic.
func (s *Sandbox) PlayKnativeReady(ctx context.Context, ns, name string, timeout time.Duration) error {
	ksvc := &unstructured.Unstructured{}
	ksvc.SetAPIVersion("serving.knative.dev/v1")
	ksvc.SetKind("Service")
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ksvc) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Knative Service %s/%s: %w", ns, name, err)
	}
	ready := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	revision := name + "-00001"
	ksvc.Object["status"] = map[string]any{
		"observedGeneration": ksvc.GetGeneration(), "url": "http://" + name + "." + ns + ".example.com",
		"latestReadyRevisionName": revision, "latestCreatedRevisionName": revision,
		"conditions": []any{ready("Ready"), ready("ConfigurationsReady"), ready("RoutesReady")},
		"traffic":    []any{map[string]any{"revisionName": revision, "latestRevision": true, "percent": int64(100)}},
	}
	return s.Client.Status().Update(ctx, ksvc)
}

// PlayKEDAReady stands in for KEDA's operator, which the sandbox does not
// run: it waits (up to timeout) for the ScaledObject ns/name and writes the
// Ready condition KEDA writes once it scales the target.
func (s *Sandbox) PlayKEDAReady(ctx context.Context, ns, name string, timeout time.Duration) error {
	so := &unstructured.Unstructured{}
	so.SetAPIVersion("keda.sh/v1alpha1")
	so.SetKind("ScaledObject")
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, so) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for ScaledObject %s/%s: %w", ns, name, err)
	}
	so.Object["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ScaledObject is defined correctly and is ready for scaling"},
	}}
	return s.Client.Status().Update(ctx, so)
}
