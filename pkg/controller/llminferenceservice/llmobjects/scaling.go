package llmobjects

import (
	"encoding/json"
	"fmt"
	"strconv"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// The Workload Variant Autoscaler's names, KServe's.
const (
	// WVADesiredReplicasMetric is the metric WVA publishes per variant.
	WVADesiredReplicasMetric = "wva_desired_replicas"
	wvaManagedAnnotation     = "llm-d.ai/managed"
	wvaModelIDAnnotation     = "llm-d.ai/model-id"
	wvaVariantCostAnnotation = "llm-d.ai/variant-cost"
	// AcceleratorLabel on a workload names its accelerator for WVA.
	AcceleratorLabel = "inference.optimization/acceleratorName"
)

// ErrNoPrometheus is the error of a KEDA actuator without the Prometheus
// it reads WVA's metric from.
var ErrNoPrometheus = fmt.Errorf("serval-config llmAutoscaling.prometheus.url is empty: a KEDA actuator reads %s from that Prometheus; set it, or use the hpa actuator", WVADesiredReplicasMetric)

// UsesKEDA reports whether a part's autoscaler is a KEDA ScaledObject.
func UsesKEDA(s *v1alpha2.ScalingSpec) bool {
	return s != nil && (s.KEDA != nil || s.WVA != nil && s.WVA.KEDA != nil)
}

// ScalingObjects are a part's autoscaler, as KServe makes it: with wva, an
// HPA or a ScaledObject following wva_desired_replicas of the part's
// variant; with keda, a ScaledObject on the user's triggers. None without
// scaling.
func ScalingObjects(in Inputs, p Part) ([]apply.Object, error) {
	s := p.Spec.Scaling
	svc := in.Service
	switch {
	case s == nil:
		return nil, nil
	case s.WVA != nil && s.WVA.HPA != nil:
		key := types.NamespacedName{Namespace: svc.Namespace, Name: p.HPAName(svc.Name)}
		return []apply.Object{{GVK: standard.HPAKind.GVK, Key: key, Spec: wvaHPA(in, p)}}, nil
	case s.WVA != nil && s.WVA.KEDA != nil:
		if in.Autoscaling.PrometheusURL == "" {
			return nil, ErrNoPrometheus
		}
		so, err := scaledObject(in, p, s.WVA.KEDA, []any{prometheusTrigger(in.Autoscaling, wvaQuery(p.ScaledObjectName(svc.Name), svc.Namespace))}, true)
		if err != nil {
			return nil, err
		}
		return []apply.Object{scaledObjectApply(svc, p, so)}, nil
	case s.KEDA != nil:
		triggers, err := userTriggers(s.KEDA.Triggers)
		if err != nil {
			return nil, err
		}
		if in.ScalesFromZero(p) {
			triggers = append(triggers, standard.ActivatorTrigger(in.Activator, presets.WorkloadServiceName(svc.Name)))
		}
		so, err := scaledObject(in, p, &s.KEDA.KEDAScalingSpec, triggers, false)
		if err != nil {
			return nil, err
		}
		return []apply.Object{scaledObjectApply(svc, p, so)}, nil
	}
	return nil, nil
}

func scaledObjectApply(svc *v1alpha2.LLMInferenceService, p Part, so *unstructured.Unstructured) apply.Object {
	return apply.Object{GVK: standard.ScaledObjectKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: p.ScaledObjectName(svc.Name)},
		Spec: client.ApplyConfigurationFromUnstructured(so)}
}

// scaleTarget is what the part's autoscaler scales: its Deployment or its
// LeaderWorkerSet (which has a scale subresource).
func scaleTarget(svc string, p Part) (apiVersion, kind, name string) {
	if p.MultiNode() {
		return LeaderWorkerSetKind.GVK.GroupVersion().String(), LeaderWorkerSetKind.GVK.Kind, p.Name(svc)
	}
	return "apps/v1", "Deployment", p.Name(svc)
}

// scalingLabels are on a part's autoscaler: the owner's and KServe's; with
// WVA, the accelerator too ("unknown" unless the workload's labels name
// it).
func scalingLabels(svc *v1alpha2.LLMInferenceService, p Part, wva bool) map[string]string {
	l := commonLabels(svc, p.Component())
	l[AppComponentLabel] = "llminferenceservice-workload"
	if wva {
		l[AcceleratorLabel] = "unknown"
		if v := p.Spec.Labels[AcceleratorLabel]; v != "" {
			l[AcceleratorLabel] = v
		}
	}
	return l
}

// wvaAnnotations tell WVA the autoscaler is its variant's: the model (its
// name, else its URI) and the variant's cost.
func wvaAnnotations(in Inputs, wva *v1alpha2.WVASpec) map[string]string {
	model := in.Spec.Model.URI
	if in.Spec.Model.Name != nil {
		model = *in.Spec.Model.Name
	}
	a := map[string]string{wvaManagedAnnotation: "true", wvaModelIDAnnotation: model}
	if wva.VariantCost != "" {
		a[wvaVariantCostAnnotation] = wva.VariantCost
	}
	return a
}

// wvaHPA follows wva_desired_replicas of the HPA's variant through the
// external metrics API, at a target value of 1.
func wvaHPA(in Inputs, p Part) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	svc, s := in.Service, p.Spec.Scaling
	apiVersion, kind, name := scaleTarget(svc.Name, p)
	spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion(apiVersion).WithKind(kind).WithName(name)).
		WithMinReplicas(ptr.Deref(s.MinReplicas, 1)).
		WithMaxReplicas(s.MaxReplicas).
		WithMetrics(autoscalingv2ac.MetricSpec().WithType(autoscalingv2.ExternalMetricSourceType).
			WithExternal(autoscalingv2ac.ExternalMetricSource().
				WithMetric(autoscalingv2ac.MetricIdentifier().WithName(WVADesiredReplicasMetric).
					WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"variant_name": p.HPAName(svc.Name)}))).
				WithTarget(autoscalingv2ac.MetricTarget().WithType(autoscalingv2.ValueMetricType).WithValue(resource.MustParse("1")))))
	if b := s.WVA.HPA.Behavior; b != nil {
		behavior := &autoscalingv2ac.HorizontalPodAutoscalerBehaviorApplyConfiguration{}
		if data, err := json.Marshal(b); err == nil && json.Unmarshal(data, behavior) == nil {
			spec.WithBehavior(behavior)
		}
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(p.HPAName(svc.Name), svc.Namespace).
		WithLabels(scalingLabels(svc, p, true)).
		WithAnnotations(wvaAnnotations(in, s.WVA)).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithSpec(spec)
}

// wvaQuery is the PromQL of a variant's desired replicas.
func wvaQuery(variant, namespace string) string {
	return fmt.Sprintf(`%s{variant_name=%q,exported_namespace=%q}`, WVADesiredReplicasMetric, variant, namespace)
}

// prometheusTrigger reads WVA's desired replicas from the configured
// Prometheus, at a threshold of 1.
func prometheusTrigger(a config.LLMAutoscaling, query string) any {
	meta := map[string]any{"serverAddress": a.PrometheusURL, "query": query, "threshold": "1",
		"unsafeSsl": strconv.FormatBool(a.TLSInsecureSkipVerify)}
	if a.AuthModes != "" {
		meta["authModes"] = a.AuthModes
	}
	t := map[string]any{"type": "prometheus", "name": "wva-desired-replicas", "metadata": meta}
	if a.TriggerAuthName != "" {
		ref := map[string]any{"name": a.TriggerAuthName}
		if a.TriggerAuthKind != "" {
			ref["kind"] = a.TriggerAuthKind
		}
		t["authenticationRef"] = ref
	}
	return t
}

// userTriggers are the user's KEDA triggers, as Unstructured holds them.
func userTriggers(ts []v1alpha2.ScaleTrigger) ([]any, error) {
	data, err := json.Marshal(ts)
	if err != nil {
		return nil, err
	}
	var out []any
	return out, json.Unmarshal(data, &out)
}

// scaledObject is a part's ScaledObject: its bounds, KEDA's settings and
// the triggers.
func scaledObject(in Inputs, p Part, k *v1alpha2.KEDAScalingSpec, triggers []any, wva bool) (*unstructured.Unstructured, error) {
	svc, s := in.Service, p.Spec.Scaling
	apiVersion, kind, name := scaleTarget(svc.Name, p)
	spec := map[string]any{
		"scaleTargetRef":  map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name},
		"minReplicaCount": int64(ptr.Deref(s.MinReplicas, 1)),
		"maxReplicaCount": int64(s.MaxReplicas),
		"triggers":        triggers,
	}
	for key, v := range map[string]*int32{"pollingInterval": k.PollingInterval, "cooldownPeriod": k.CooldownPeriod,
		"initialCooldownPeriod": k.InitialCooldownPeriod, "idleReplicaCount": k.IdleReplicaCount} {
		if v != nil {
			spec[key] = int64(*v)
		}
	}
	for key, raw := range map[string][]byte{"fallback": rawOf(k.Fallback), "advanced": rawOf(k.Advanced)} {
		if len(raw) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("scaling's KEDA %s does not decode: %w", key, err)
		}
		spec[key] = v
	}
	labels := map[string]any{}
	for key, v := range scalingLabels(svc, p, wva) {
		labels[key] = v
	}
	meta := map[string]any{"name": p.ScaledObjectName(svc.Name), "namespace": svc.Namespace, "labels": labels,
		"ownerReferences": []any{owner.OfLLM(svc).Unstructured()}}
	if wva {
		annotations := map[string]any{}
		for key, v := range wvaAnnotations(in, s.WVA) {
			annotations[key] = v
		}
		meta["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": standard.ScaledObjectKind.GVK.GroupVersion().String(), "kind": standard.ScaledObjectKind.GVK.Kind,
		"metadata": meta, "spec": spec,
	}}, nil
}

// rawOf is a schemaless field's JSON; nil when unset.
func rawOf(j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return nil
	}
	return j.Raw
}
