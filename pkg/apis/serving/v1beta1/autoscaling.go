package v1beta1

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AutoScalingSpec is KServe's metric-based autoscaling (spec.<component>.
// autoScaling), which autoscalerClass keda turns into a KEDA ScaledObject.
// It is stored schemaless and decoded strictly here.
type AutoScalingSpec struct {
	Metrics []MetricsSpec `json:"metrics,omitempty"`
}

// MetricSourceType is a kind of metric.
type MetricSourceType string

// The metric types KServe defines.
const (
	// ResourceMetricSourceType scales on the pods' cpu or memory.
	ResourceMetricSourceType MetricSourceType = "Resource"
	// ExternalMetricSourceType scales on a query to a metrics backend
	// (Prometheus).
	ExternalMetricSourceType MetricSourceType = "External"
	// PodMetricSourceType scales on the pods' own metrics, through KEDA's
	// OpenTelemetry add-on.
	PodMetricSourceType MetricSourceType = "PodMetric"
)

// MetricsSpec is one metric to scale on: exactly the source of its type.
type MetricsSpec struct {
	Type      MetricSourceType      `json:"type"`
	Resource  *ResourceMetricSource `json:"resource,omitempty"`
	External  *ExternalMetricSource `json:"external,omitempty"`
	PodMetric *PodMetricSource      `json:"podmetric,omitempty"`
}

// ResourceMetricSource is cpu or memory with a target.
type ResourceMetricSource struct {
	Name   string       `json:"name"`
	Target MetricTarget `json:"target"`
}

// MetricTarget is the value a metric is held at.
type MetricTarget struct {
	// Type is Utilization, Value or AverageValue.
	Type               string             `json:"type"`
	Value              *resource.Quantity `json:"value,omitempty"`
	AverageValue       *resource.Quantity `json:"averageValue,omitempty"`
	AverageUtilization *int32             `json:"averageUtilization,omitempty"`
}

// ExternalMetricSource is a query to a metrics backend.
type ExternalMetricSource struct {
	Metric ExternalMetrics `json:"metric"`
	Target MetricTarget    `json:"target"`
	// Authentication names a KEDA TriggerAuthentication.
	Authentication *ExtMetricAuthentication `json:"authenticationRef,omitempty"`
}

// ExternalMetrics is the backend and its query.
type ExternalMetrics struct {
	// Backend is the KEDA scaler: prometheus (KServe's default) or graphite.
	Backend       string `json:"backend,omitempty"`
	ServerAddress string `json:"serverAddress,omitempty"`
	Query         string `json:"query,omitempty"`
	Namespace     string `json:"namespace,omitempty"`
}

// ExtMetricAuthentication is how the scaler authenticates to the metrics
// backend, in KServe's shape: {authenticationRef: {name}, authModes}.
type ExtMetricAuthentication struct {
	// AuthenticationRef names a KEDA TriggerAuthentication.
	AuthenticationRef AuthenticationRef `json:"authenticationRef"`
	// AuthModes is the scaler's authModes: bearer, basic or tls (a comma
	// separated list).
	AuthModes string `json:"authModes,omitempty"`
}

// AuthenticationRef names a KEDA TriggerAuthentication.
type AuthenticationRef struct {
	Name string `json:"name"`
}

// UnmarshalJSON decodes KServe's shape, {authenticationRef: {name},
// authModes}, strictly; and the shape Serval read before,
// {name}, which KEDA's own triggers use.
func (a *ExtMetricAuthentication) UnmarshalJSON(data []byte) error {
	type kserveShape ExtMetricAuthentication
	var k kserveShape
	if err := decodeStrictly(data, &k); err == nil {
		*a = ExtMetricAuthentication(k)
		return nil
	}
	var short struct {
		Name string `json:"name"`
	}
	if err := decodeStrictly(data, &short); err != nil {
		return errors.New(`authenticationRef is {authenticationRef: {name: <TriggerAuthentication>}, authModes: <bearer|basic|tls>}, as in KServe`)
	}
	*a = ExtMetricAuthentication{AuthenticationRef: AuthenticationRef{Name: short.Name}}
	return nil
}

// PodMetricSource is a metric the pods export.
type PodMetricSource struct {
	Metric PodMetrics   `json:"metric"`
	Target MetricTarget `json:"target"`
}

// PodMetrics is the OpenTelemetry query of a pod metric.
type PodMetrics struct {
	// Backend is opentelemetry.
	Backend           string   `json:"backend,omitempty"`
	ServerAddress     string   `json:"serverAddress,omitempty"`
	MetricNames       []string `json:"metricNames,omitempty"`
	Query             string   `json:"query,omitempty"`
	OperationOverTime string   `json:"operationOverTime,omitempty"`
}

// The metric target types.
const (
	TargetUtilization  = "Utilization"
	TargetValue        = "Value"
	TargetAverageValue = "AverageValue"
)

// AutoScalingOf decodes a component's autoScaling strictly; nil when unset.
func AutoScalingOf(ext *ComponentExtensionSpec) (*AutoScalingSpec, error) {
	if ext.AutoScaling == nil || len(ext.AutoScaling.Raw) == 0 {
		return nil, nil
	}
	spec := &AutoScalingSpec{}
	if err := decodeStrict(ext.AutoScaling.Raw, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// validateAutoScaling checks autoScaling: KEDA's metrics only with
// autoscalerClass keda, each metric complete for its type.
func validateAutoScaling(ext *ComponentExtensionSpec, path *field.Path, class AutoscalerClass) field.ErrorList {
	p := path.Child("autoScaling")
	spec, err := AutoScalingOf(ext)
	if err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())}
	}
	if spec == nil {
		return nil
	}
	switch class {
	case AutoscalerKEDA, AutoscalerHPA:
	default:
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf("autoScaling takes effect with autoscalerClass keda or hpa, not %s", class))}
	}
	var errs field.ErrorList
	for i, m := range spec.Metrics {
		mp := p.Child("metrics").Index(i)
		if class == AutoscalerHPA && m.Type != ResourceMetricSourceType {
			// KServe's HPA skips them without a word.
			article := "a"
			if m.Type == ExternalMetricSourceType {
				article = "an"
			}
			errs = append(errs, field.Forbidden(mp.Child("type"), fmt.Sprintf(
				"an HPA scales on Resource metrics (cpu, memory); %s %s metric needs autoscalerClass keda", article, m.Type)))
			continue
		}
		switch m.Type {
		case ResourceMetricSourceType:
			if m.Resource == nil {
				errs = append(errs, field.Required(mp.Child("resource"), "a Resource metric needs resource"))
				continue
			}
			if m.Resource.Name != string(ScaleMetricCPU) && m.Resource.Name != string(ScaleMetricMemory) {
				errs = append(errs, field.NotSupported(mp.Child("resource", "name"), m.Resource.Name, []string{"cpu", "memory"}))
			}
			errs = append(errs, validateTarget(m.Resource.Target, mp.Child("resource", "target"), TargetUtilization, TargetAverageValue)...)
			if t := m.Resource.Target; m.Resource.Name == string(ScaleMetricMemory) && t.Type == TargetAverageValue && t.AverageValue != nil &&
				t.AverageValue.Sign() > 0 && t.AverageValue.Cmp(resource.MustParse("1Mi")) < 0 {
				errs = append(errs, field.Invalid(mp.Child("resource", "target", "averageValue"), t.AverageValue.String(), "the memory target value should be greater than 1 MiB"))
			}
		case ExternalMetricSourceType:
			if m.External == nil {
				errs = append(errs, field.Required(mp.Child("external"), "an External metric needs external"))
				continue
			}
			switch m.External.Metric.Backend {
			case "", "prometheus", "graphite":
			default:
				errs = append(errs, field.NotSupported(mp.Child("external", "metric", "backend"), m.External.Metric.Backend, []string{"prometheus", "graphite"}))
			}
			if m.External.Metric.ServerAddress == "" {
				errs = append(errs, field.Required(mp.Child("external", "metric", "serverAddress"), "the metrics backend's address"))
			}
			if m.External.Metric.Query == "" {
				errs = append(errs, field.Required(mp.Child("external", "metric", "query"), "the query whose value is scaled on"))
			}
			errs = append(errs, validateTarget(m.External.Target, mp.Child("external", "target"), TargetValue, TargetAverageValue)...)
		case PodMetricSourceType:
			if m.PodMetric == nil {
				errs = append(errs, field.Required(mp.Child("podmetric"), "a PodMetric metric needs podmetric"))
				continue
			}
			if b := m.PodMetric.Metric.Backend; b != "" && b != "opentelemetry" {
				errs = append(errs, field.NotSupported(mp.Child("podmetric", "metric", "backend"), b, []string{"opentelemetry"}))
			}
			if m.PodMetric.Metric.Query == "" {
				errs = append(errs, field.Required(mp.Child("podmetric", "metric", "query"), "the query whose value is scaled on"))
			}
			errs = append(errs, validateTarget(m.PodMetric.Target, mp.Child("podmetric", "target"), TargetValue, TargetAverageValue)...)
		default:
			errs = append(errs, field.NotSupported(mp.Child("type"), m.Type, []string{"Resource", "External", "PodMetric"}))
		}
	}
	return errs
}

// validateTarget checks a target: one of the allowed types, with its value.
func validateTarget(t MetricTarget, path *field.Path, allowed ...string) field.ErrorList {
	ok := false
	for _, a := range allowed {
		ok = ok || t.Type == a
	}
	if !ok {
		return field.ErrorList{field.NotSupported(path.Child("type"), t.Type, allowed)}
	}
	switch {
	case t.Type == TargetUtilization && (t.AverageUtilization == nil || *t.AverageUtilization < 1):
		return field.ErrorList{field.Required(path.Child("averageUtilization"), "a Utilization target needs averageUtilization of 1 or more (percent)")}
	case t.Type == TargetUtilization && *t.AverageUtilization > 100:
		return field.ErrorList{field.Invalid(path.Child("averageUtilization"), *t.AverageUtilization, "the target utilization percentage should be a [1-100] integer")}
	case t.Type == TargetAverageValue && t.AverageValue == nil:
		return field.ErrorList{field.Required(path.Child("averageValue"), "an AverageValue target needs averageValue")}
	case t.Type == TargetAverageValue && t.AverageValue.Sign() <= 0:
		return field.ErrorList{field.Invalid(path.Child("averageValue"), t.AverageValue.String(), "must be greater than 0: KEDA scales to hold the metric's average per pod at this value")}
	case t.Type == TargetValue && t.Value == nil:
		return field.ErrorList{field.Required(path.Child("value"), "a Value target needs value")}
	case t.Type == TargetValue && t.Value.Sign() <= 0:
		return field.ErrorList{field.Invalid(path.Child("value"), t.Value.String(), "must be greater than 0: KEDA scales to hold the metric at this value")}
	}
	return nil
}
