package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
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

// PlayInferenceGateway stands in for a Gateway implementation that speaks
// the Gateway API Inference Extension, which the sandbox does not run: it
// makes the Gateway gateway (programmed, with an address) if it is not
// there, then waits (up to timeout) for the InferencePool and the HTTPRoute
// of an LLMInferenceService (either may be "" when there is none) and
// accepts them.
func (s *Sandbox) PlayInferenceGateway(ctx context.Context, gateway types.NamespacedName, ns, pool, route string, timeout time.Duration) error {
	if err := s.ProgramGateway(ctx, gateway); err != nil {
		return err
	}
	if pool != "" {
		p := &igwapi.InferencePool{}
		if err := s.waitFor(ctx, types.NamespacedName{Namespace: ns, Name: pool}, p, timeout); err != nil {
			return err
		}
		if err := s.acceptPool(ctx, gateway, p); err != nil {
			return err
		}
	}
	if route != "" {
		r := &gatewayv1.HTTPRoute{}
		if err := s.waitFor(ctx, types.NamespacedName{Namespace: ns, Name: route}, r, timeout); err != nil {
			return err
		}
		return s.acceptRoute(ctx, r)
	}
	return nil
}

// ProgramGateway makes the Gateway gateway if it is not there and reports
// it programmed, with an address, as a Gateway implementation would.
func (s *Sandbox) ProgramGateway(ctx context.Context, gateway types.NamespacedName) error {
	gw := &gatewayv1.Gateway{}
	if err := s.Client.Get(ctx, gateway, gw); apierrors.IsNotFound(err) {
		gw = &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: gateway.Namespace, Name: gateway.Name},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "sandbox", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
		if err := s.Client.Create(ctx, gw); err != nil {
			return fmt.Errorf("create Gateway %s: %w", gateway, err)
		}
	} else if err != nil {
		return err
	}
	now := metav1.Now()
	gw.Status = gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: "127.0.0.1"}},
		Conditions: []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: now},
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: now}}}
	if err := s.Client.Status().Update(ctx, gw); err != nil {
		return fmt.Errorf("program Gateway %s: %w", gateway, err)
	}
	return nil
}

// AcceptInferenceTraffic plays the Gateway gateway for every InferencePool
// and HTTPRoute that appears in ns until ctx ends: each is accepted once,
// as it is created, by one of several workers, as a Gateway
// implementation's controller would. Benchmarks run it beside hundreds of
// services.
func (s *Sandbox) AcceptInferenceTraffic(ctx context.Context, gateway types.NamespacedName, ns string) error {
	w, err := client.NewWithWatch(s.Env.Config, client.Options{Scheme: s.Client.Scheme()})
	if err != nil {
		return err
	}
	pools, err := w.Watch(ctx, &igwapi.InferencePoolList{}, client.InNamespace(ns))
	if err != nil {
		return fmt.Errorf("watch InferencePools: %w", err)
	}
	defer pools.Stop()
	routes, err := w.Watch(ctx, &gatewayv1.HTTPRouteList{}, client.InNamespace(ns))
	if err != nil {
		return fmt.Errorf("watch HTTPRoutes: %w", err)
	}
	defer routes.Stop()
	work := make(chan client.Object)
	errs := make(chan error, acceptWorkers)
	var wg sync.WaitGroup
	for range acceptWorkers {
		wg.Go(func() {
			for obj := range work {
				var err error
				switch o := obj.(type) {
				case *igwapi.InferencePool:
					err = s.acceptPool(ctx, gateway, o)
				case *gatewayv1.HTTPRoute:
					err = s.acceptRoute(ctx, o)
				}
				if err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		})
	}
	defer wg.Wait()
	defer close(work)
	for {
		var e watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			return err
		case e, ok = <-pools.ResultChan():
			if !ok {
				return errors.New("the watch of InferencePools ended")
			}
		case e, ok = <-routes.ResultChan():
			if !ok {
				return errors.New("the watch of HTTPRoutes ended")
			}
		}
		obj, isObject := e.Object.(client.Object)
		if e.Type != watch.Added || !isObject {
			continue
		}
		select {
		case work <- obj:
		case err := <-errs:
			return err
		case <-ctx.Done():
			return nil
		}
	}
}

// acceptWorkers is how many objects AcceptInferenceTraffic accepts at once.
const acceptWorkers = 16

func acceptedConditions() []metav1.Condition {
	now := metav1.Now()
	return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: now},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", LastTransitionTime: now}}
}

func (s *Sandbox) acceptPool(ctx context.Context, gateway types.NamespacedName, p *igwapi.InferencePool) error {
	parent := igwapi.ParentReference{Name: igwapi.ObjectName(gateway.Name), Namespace: igwapi.Namespace(gateway.Namespace)}
	p.Status.Parents = []igwapi.ParentStatus{{ParentRef: parent, Conditions: acceptedConditions()}}
	if err := s.Client.Status().Update(ctx, p); err != nil {
		return fmt.Errorf("accept InferencePool %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func (s *Sandbox) acceptRoute(ctx context.Context, r *gatewayv1.HTTPRoute) error {
	for _, ref := range r.Spec.ParentRefs {
		r.Status.Parents = append(r.Status.Parents, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "sandbox.serval.dev/gateway", Conditions: acceptedConditions()})
	}
	if err := s.Client.Status().Update(ctx, r); err != nil {
		return fmt.Errorf("accept HTTPRoute %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}

// waitFor waits (up to timeout) until obj exists at key, and reads it.
func (s *Sandbox) waitFor(ctx context.Context, key types.NamespacedName, obj client.Object, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return s.Client.Get(ctx, key, obj) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %T %s: %w", obj, key, err)
	}
	return nil
}
