package standard

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
)

// DefaultCPUUtilization is the HPA's CPU target when scaleTarget is unset.
const DefaultCPUUtilization int32 = 80

// WantsHPA reports whether c gets an HPA: autoscalerClass hpa (the default).
func WantsHPA(c *components.Component) bool {
	return c.AutoscalerClass == v1beta1.AutoscalerHPA
}

// MakeHPA returns the HorizontalPodAutoscaler of c, scaling its Deployment
// between minReplicas and maxReplicas (at least minReplicas) on cpu or memory.
func MakeHPA(c *components.Component) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	minR := c.Replicas
	if minR < 1 {
		minR = 1 // validation rejects 0 under an HPA; stay valid regardless
	}
	maxR := c.Extension.MaxReplicas
	if maxR < minR {
		maxR = minR
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(c.Name, c.Namespace()).
		WithLabels(c.Labels).
		WithOwnerReferences(c.Owner.Reference()).
		WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().
			WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().
				WithAPIVersion("apps/v1").WithKind("Deployment").WithName(c.Name)).
			WithMinReplicas(minR).
			WithMaxReplicas(maxR).
			WithMetrics(hpaMetrics(c)...))
}

// hpaMetrics are the HPA's metrics: autoScaling's Resource metrics, as
// KServe's HPA reads them (cpu as a utilization, 80% unless given; memory
// as a utilization or an average value); without autoScaling, scaleMetric
// and scaleTarget.
func hpaMetrics(c *components.Component) []*autoscalingv2ac.MetricSpecApplyConfiguration {
	spec, err := v1beta1.AutoScalingOf(&c.Extension)
	if err != nil || spec == nil || len(spec.Metrics) == 0 {
		// A spec that does not decode is refused before it gets here.
		return []*autoscalingv2ac.MetricSpecApplyConfiguration{metric(c)}
	}
	var out []*autoscalingv2ac.MetricSpecApplyConfiguration
	for _, m := range spec.Metrics {
		if m.Type != v1beta1.ResourceMetricSourceType || m.Resource == nil {
			continue // validation refuses them under an HPA
		}
		target := autoscalingv2ac.MetricTarget()
		t := m.Resource.Target
		switch {
		case t.Type == v1beta1.TargetAverageValue && t.AverageValue != nil:
			target.WithType(autoscalingv2.AverageValueMetricType).WithAverageValue(*t.AverageValue)
		case t.AverageUtilization != nil:
			target.WithType(autoscalingv2.UtilizationMetricType).WithAverageUtilization(*t.AverageUtilization)
		default:
			target.WithType(autoscalingv2.UtilizationMetricType).WithAverageUtilization(DefaultCPUUtilization)
		}
		out = append(out, autoscalingv2ac.MetricSpec().WithType(autoscalingv2.ResourceMetricSourceType).
			WithResource(autoscalingv2ac.ResourceMetricSource().WithName(corev1.ResourceName(m.Resource.Name)).WithTarget(target)))
	}
	return out
}

// metric is the HPA metric: cpu (default) or memory, as utilization (%) or as
// an average value (millicores for cpu, MiB for memory).
func metric(c *components.Component) *autoscalingv2ac.MetricSpecApplyConfiguration {
	name := corev1.ResourceCPU
	if m := c.Extension.ScaleMetric; m != nil && *m == v1beta1.ScaleMetricMemory {
		name = corev1.ResourceMemory
	}
	target := autoscalingv2ac.MetricTarget()
	value := DefaultCPUUtilization
	if c.Extension.ScaleTarget != nil {
		value = *c.Extension.ScaleTarget
	}
	if t := c.Extension.ScaleMetricType; t != nil && *t == v1beta1.AverageValueMetricType {
		unit := "m"
		if name == corev1.ResourceMemory {
			unit = "Mi"
		}
		target.WithType(autoscalingv2.AverageValueMetricType).WithAverageValue(resource.MustParse(fmt.Sprintf("%d%s", value, unit)))
	} else {
		target.WithType(autoscalingv2.UtilizationMetricType).WithAverageUtilization(value)
	}
	return autoscalingv2ac.MetricSpec().
		WithType(autoscalingv2.ResourceMetricSourceType).
		WithResource(autoscalingv2ac.ResourceMetricSource().WithName(name).WithTarget(target))
}

// HPASignal is HPAKind's StatusSignal. An LLMInferenceService's
// ScalingReady reads whether its HPA can scale and scales (AbleToScale,
// ScalingActive, with the reason when it cannot); an InferenceService reads
// nothing of its HPA's status. The replica counts and metrics the HPA
// rewrites as they move bring no reconcile.
func HPASignal(obj client.Object) string {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok || hpa.Labels[v1alpha2.LLMInferenceServiceLabel] == "" {
		return ""
	}
	sig := ""
	for _, c := range hpa.Status.Conditions {
		if c.Type != autoscalingv2.AbleToScale && c.Type != autoscalingv2.ScalingActive {
			continue
		}
		sig += string(c.Type) + "=" + string(c.Status)
		if c.Status == corev1.ConditionFalse {
			sig += "/" + c.Reason
		}
		sig += ";"
	}
	return sig
}
