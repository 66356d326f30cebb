package llminferenceservice

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// observePart reads a model workload: its Deployment or its
// LeaderWorkerSet.
func observePart(ctx context.Context, reader client.Reader, s *scope, p *partState) error {
	if _, missing := s.missing[p.Condition()]; missing {
		return nil
	}
	var st workload.State
	var err error
	if p.MultiNode() {
		st, err = llmobjects.ObserveLeaderWorkerSet(ctx, reader, p.workload, s.svc.Namespace)
	} else {
		// The main Deployment's selector also matches the prefill pods:
		// its own pods are told by their part.
		c := *p.workload.Leader
		c.Selector = p.workload.Pods
		st, err = standard.Mode{}.Observe(ctx, reader, &c)
	}
	if err != nil {
		return err
	}
	p.state = &st
	return nil
}

// observeScaling reads a part's autoscaler, KServe's rules: an HPA is
// ready once it reports AbleToScale and ScalingActive, neither False; a
// ScaledObject once its Ready is True.
func observeScaling(ctx context.Context, reader client.Reader, s *scope, p *partState) (*cond, error) {
	sc := p.Spec.Scaling
	if sc.WVA != nil && sc.WVA.HPA != nil {
		name := p.HPAName(s.svc.Name)
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		err := reader.Get(ctx, types.NamespacedName{Namespace: s.svc.Namespace, Name: name}, hpa)
		switch {
		case apierrors.IsNotFound(err):
			return &cond{reason: "HPAProgressing", message: "HorizontalPodAutoscaler " + name + " does not exist yet"}, nil
		case err != nil:
			return nil, fmt.Errorf("get HorizontalPodAutoscaler %s: %w", name, err)
		}
		return hpaReadiness(hpa), nil
	}
	name := p.ScaledObjectName(s.svc.Name)
	so := standard.ScaledObjectKind.New().(*unstructured.Unstructured)
	err := reader.Get(ctx, types.NamespacedName{Namespace: s.svc.Namespace, Name: name}, so)
	switch {
	case apierrors.IsNotFound(err):
		return &cond{reason: "ScaledObjectProgressing", message: "ScaledObject " + name + " does not exist yet"}, nil
	case err != nil:
		return nil, fmt.Errorf("get ScaledObject %s: %w", name, err)
	}
	status, _, _ := unstructured.NestedMap(so.Object, "status")
	if ok, msg := workload.UnstructuredCondition(status, "Ready", "KEDA"); !ok {
		return &cond{reason: "ScaledObjectNotReady", message: "ScaledObject " + name + ": " + msg}, nil
	}
	return &cond{ok: true, reason: "ScalingReady", message: "ScaledObject " + name + " is ready"}, nil
}

// hpaReadiness is an HPA's readiness from AbleToScale and ScalingActive.
func hpaReadiness(hpa *autoscalingv2.HorizontalPodAutoscaler) *cond {
	found := false
	for _, c := range hpa.Status.Conditions {
		if c.Type != autoscalingv2.AbleToScale && c.Type != autoscalingv2.ScalingActive {
			continue
		}
		found = true
		if c.Status == corev1.ConditionFalse {
			return &cond{reason: c.Reason, message: fmt.Sprintf("HorizontalPodAutoscaler %s: %s", hpa.Name, c.Message)}
		}
	}
	if !found {
		return &cond{reason: "HPAProgressing", message: fmt.Sprintf("HorizontalPodAutoscaler %s has not reported AbleToScale and ScalingActive yet", hpa.Name)}
	}
	return &cond{ok: true, reason: "ScalingReady", message: fmt.Sprintf("HorizontalPodAutoscaler %s scales the workload", hpa.Name)}
}
