package llmobjects

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// The OpenTelemetry service names of the components, KServe's.
const (
	serverServiceName    = "inference-server"
	schedulerServiceName = "inference-scheduler"
)

// addServerTracing turns vLLM's tracing on in the model container, as
// KServe does: its OTLP endpoint and detailed traces, and the OTEL_
// environment (a variable the container sets itself is kept).
func addServerTracing(t *v1alpha2.TracingSpec, svc *v1alpha2.LLMInferenceService, c *corev1.Container) {
	endpoint := ptr.Deref(t, v1alpha2.TracingSpec{}).ExporterEndpoint
	if t == nil || ptr.Deref(endpoint, "") == "" {
		return
	}
	if !hasFlag(c.Args, "--otlp-traces-endpoint") {
		c.Args = append(c.Args, "--otlp-traces-endpoint", *endpoint)
	}
	if !hasFlag(c.Args, "--collect-detailed-traces") {
		c.Args = append(c.Args, "--collect-detailed-traces", "all")
	}
	c.Env = withDefaults(c.Env, otelEnv(t, serverServiceName, svc))
}

// addSchedulerTracing turns the endpoint picker's tracing on.
func addSchedulerTracing(t *v1alpha2.TracingSpec, svc *v1alpha2.LLMInferenceService, c *corev1.Container) {
	if t == nil {
		return
	}
	if !hasFlag(c.Args, "--tracing") && !hasFlag(c.Args, "-tracing") {
		c.Args = append(c.Args, "--tracing=true")
	}
	c.Env = withDefaults(c.Env, otelEnv(t, schedulerServiceName, svc))
}

// otelEnv is the OpenTelemetry environment of a component, with the pod's
// node, name and namespace as resource attributes.
func otelEnv(t *v1alpha2.TracingSpec, service string, svc *v1alpha2.LLMInferenceService) []corev1.EnvVar {
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	return []corev1.EnvVar{
		{Name: "OTEL_SERVICE_NAME", Value: service},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: ptr.Deref(t.ExporterEndpoint, "")},
		{Name: "OTEL_TRACES_EXPORTER", Value: ptr.Deref(t.Exporter, "")},
		{Name: "OTEL_TRACES_SAMPLER", Value: ptr.Deref(t.Sampler, "")},
		{Name: "OTEL_TRACES_SAMPLER_ARG", Value: ptr.Deref(t.SamplerArg, "")},
		{Name: "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", ValueFrom: field("spec.nodeName")},
		{Name: "OTEL_RESOURCE_ATTRIBUTES_POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "OTEL_RESOURCE_ATTRIBUTES", Value: "k8s.namespace.name=" + svc.Namespace +
			",k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),llmisvc.name=" + svc.Name},
	}
}

// withDefaults adds the variables of add that env does not set.
func withDefaults(env, add []corev1.EnvVar) []corev1.EnvVar {
	for _, e := range add {
		if !slices.ContainsFunc(env, func(x corev1.EnvVar) bool { return x.Name == e.Name }) {
			env = append(env, e)
		}
	}
	return env
}

// hasFlag reports whether args set a flag, as "--flag" or "--flag=value".
func hasFlag(args []string, flag string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") })
}
