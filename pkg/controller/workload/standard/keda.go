package standard

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list;watch;create;update;patch;delete

// ScaledObjectKind is KEDA's ScaledObject, built and read as Unstructured:
// KEDA's Go module pins an older controller-runtime than Serval's.
var ScaledObjectKind = kinds.Kind{
	GVK:     schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
	CRD:     "scaledobjects.keda.sh",
	Install: "install KEDA (https://keda.sh/docs/deploy/), or use autoscalerClass hpa",
	// KEDA rewrites a ScaledObject's status at every poll while it scales
	// (its last active time); Serval reads the Ready condition alone.
	StatusSignal: scaledObjectSignal,
}

// WantsScaledObject reports whether c is scaled by KEDA.
func WantsScaledObject(c *components.Component) bool {
	return c.AutoscalerClass == v1beta1.AutoscalerKEDA
}

// DefaultOTelScaler is where KEDA's OpenTelemetry add-on listens, as KServe
// configures PodMetric triggers.
const DefaultOTelScaler = "keda-otel-scaler.keda.svc:4318"

// MakeScaledObject returns the ScaledObject that scales c's Deployment
// between minReplicas (0 scales to zero) and maxReplicas on its
// autoScaling metrics, as KServe's KEDA reconciler builds it; with none,
// on scaleMetric and scaleTarget (cpu at 80% by default).
func MakeScaledObject(c *components.Component) (*unstructured.Unstructured, error) {
	spec, err := v1beta1.AutoScalingOf(&c.Extension)
	if err != nil {
		return nil, fmt.Errorf("autoScaling of %s: %w", c.Name, err)
	}
	triggers, err := kedaTriggers(c, spec)
	if err != nil {
		return nil, err
	}
	if c.ScalesFromZero() {
		triggers = append(triggers, ActivatorTrigger(c.Activator, c.Name))
	}
	minR := c.Replicas
	maxR := c.Extension.MaxReplicas
	if maxR < max(minR, 1) {
		maxR = max(minR, 1)
	}
	return unstructuredChild(c, ScaledObjectKind, map[string]any{
		"scaleTargetRef":  map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": c.Name},
		"minReplicaCount": int64(minR),
		"maxReplicaCount": int64(maxR),
		"triggers":        triggers,
	}), nil
}

// ActivatorTrigger is the ScaledObject trigger of a component that scales
// from zero: KEDA's external push scaler at the activator's address, for
// the component's Service. Its metric is the Service's held and in-flight
// requests: KEDA scales 0→1 the moment one waits (its cpu and memory
// scalers cannot scale from zero), and back to zero once none has for its
// cooldown. The metadata key is the one the activator's scaler reads
// (kedascaler.ServiceKey, which a test checks).
func ActivatorTrigger(address, service string) map[string]any {
	return map[string]any{"type": "external-push", "metadata": map[string]any{"scalerAddress": address, "service": service}}
}

// unstructuredChild is a child of c of a kind Serval builds as
// Unstructured: named as c, with its labels and owner reference.
func unstructuredChild(c *components.Component, k kinds.Kind, spec map[string]any) *unstructured.Unstructured {
	labels := map[string]any{}
	for key, v := range c.Labels {
		labels[key] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.GVK.GroupVersion().String(),
		"kind":       k.GVK.Kind,
		"metadata": map[string]any{
			"name": c.Name, "namespace": c.Namespace(), "labels": labels,
			"ownerReferences": []any{c.Owner.Unstructured()},
		},
		"spec": spec,
	}}
}

func kedaTriggers(c *components.Component, spec *v1beta1.AutoScalingSpec) ([]any, error) {
	if spec == nil || len(spec.Metrics) == 0 {
		name := "cpu"
		if m := c.Extension.ScaleMetric; m != nil && *m == v1beta1.ScaleMetricMemory {
			name = "memory"
		}
		value := DefaultCPUUtilization
		if c.Extension.ScaleTarget != nil {
			value = *c.Extension.ScaleTarget
		}
		return []any{map[string]any{"type": name, "metricType": "Utilization", "metadata": map[string]any{"value": strconv.Itoa(int(value))}}}, nil
	}
	var triggers []any
	for i, m := range spec.Metrics {
		switch {
		case m.Type == v1beta1.ResourceMetricSourceType && m.Resource != nil:
			t := m.Resource.Target
			value := ""
			switch {
			case t.Type == v1beta1.TargetUtilization && t.AverageUtilization != nil:
				value = strconv.Itoa(int(*t.AverageUtilization))
			case t.AverageValue != nil:
				value = t.AverageValue.String()
			}
			triggers = append(triggers, map[string]any{"type": m.Resource.Name, "metricType": t.Type, "metadata": map[string]any{"value": value}})
		case m.Type == v1beta1.ExternalMetricSourceType && m.External != nil:
			backend := m.External.Metric.Backend
			if backend == "" {
				backend = "prometheus"
			}
			meta := map[string]any{"serverAddress": m.External.Metric.ServerAddress, "query": m.External.Metric.Query,
				"threshold": targetValue(m.External.Target)}
			if ns := m.External.Metric.Namespace; ns != "" {
				meta["namespace"] = ns
			}
			trigger := map[string]any{"type": backend, "metadata": meta}
			if t := m.External.Target.Type; t == v1beta1.TargetAverageValue || t == v1beta1.TargetValue {
				trigger["metricType"] = t
			}
			if a := m.External.Authentication; a != nil {
				if a.AuthModes != "" {
					meta["authModes"] = a.AuthModes
				}
				if a.AuthenticationRef.Name != "" {
					trigger["authenticationRef"] = map[string]any{"name": a.AuthenticationRef.Name}
				}
			}
			triggers = append(triggers, trigger)
		case m.Type == v1beta1.PodMetricSourceType && m.PodMetric != nil:
			address := m.PodMetric.Metric.ServerAddress
			if address == "" {
				address = DefaultOTelScaler
			}
			// KServe's query: the metric summed over this Deployment's pods
			// only, which the OpenTelemetry collector labels with their
			// namespace and Deployment.
			query := fmt.Sprintf(`sum(%s{namespace=%q, deployment=%q})`, m.PodMetric.Metric.Query, c.Namespace(), c.Name)
			meta := map[string]any{"scalerAddress": address, "metricQuery": query, "targetValue": targetValue(m.PodMetric.Target)}
			if op := m.PodMetric.Metric.OperationOverTime; op != "" {
				meta["operationOverTime"] = op
			}
			triggers = append(triggers, map[string]any{"type": "external", "metadata": meta})
		default:
			return nil, fmt.Errorf("autoScaling.metrics[%d] of %s: a %s metric needs its source", i, c.Name, m.Type)
		}
	}
	return triggers, nil
}

// targetValue is a target's value as KEDA reads it: a decimal number.
func targetValue(t v1beta1.MetricTarget) string {
	q := t.Value
	if q == nil {
		q = t.AverageValue
	}
	if q == nil {
		return ""
	}
	return strconv.FormatFloat(q.AsApproximateFloat64(), 'f', -1, 64)
}

// observeScaledObject reads whether KEDA scales c: its ScaledObject's Ready
// condition.
func observeScaledObject(ctx context.Context, r client.Reader, c *components.Component) (bool, string, error) {
	so := ScaledObjectKind.New().(*unstructured.Unstructured)
	err := r.Get(ctx, c.Key(), so)
	if apierrors.IsNotFound(err) {
		return false, "the ScaledObject does not exist yet", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("get ScaledObject %s: %w", c.Name, err)
	}
	ready, msg := scaledObjectReady(so)
	return ready, msg, nil
}

// scaledObjectReady is a ScaledObject's Ready condition: whether it holds
// and, if not, why.
func scaledObjectReady(so *unstructured.Unstructured) (bool, string) {
	status, _, _ := unstructured.NestedMap(so.Object, "status")
	return workload.UnstructuredCondition(status, "Ready", "KEDA")
}

// scaledObjectSignal is ScaledObjectKind's StatusSignal.
func scaledObjectSignal(obj client.Object) string {
	so, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	ready, msg := scaledObjectReady(so)
	return strconv.FormatBool(ready) + "/" + msg
}
