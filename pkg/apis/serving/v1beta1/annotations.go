package v1beta1

import (
	"fmt"
	"strings"
)

// Annotation and label keys Serval reads and writes. KServe's keys are the same
// with the serving.kserve.io/ and networking.kserve.io/ prefixes.
const (
	// DeploymentModeAnnotation picks the workload: Standard (default) or Knative.
	DeploymentModeAnnotation = "serving.serval.dev/deploymentMode"
	// AutoscalerClassAnnotation picks the autoscaler: hpa (default in Standard
	// mode), kpa (Knative), none or external.
	AutoscalerClassAnnotation = "serving.serval.dev/autoscalerClass"
	// StorageSecretNameAnnotation names the Secret with storage credentials.
	StorageSecretNameAnnotation = "serving.serval.dev/storageSecretName"
	// DisableAutoUpdateAnnotation "true" keeps an InferenceService on its
	// current runtime spec when the runtime is updated.
	DisableAutoUpdateAnnotation = "serving.serval.dev/disable-auto-update"
	// PrometheusScrapeAnnotation "true" asks Prometheus to scrape the
	// components' pods: the prometheus.io/scrape, port and path annotations.
	PrometheusScrapeAnnotation = "serving.serval.dev/enable-prometheus-scraping"
	// ServerTypeAnnotation on a runtime names its model server (mlserver,
	// torchserve), for the server's KServe defaults; the runtime's name
	// (kserve-mlserver, kserve-torchserve) is used when it is absent.
	ServerTypeAnnotation = "serving.serval.dev/server-type"
	// StopAnnotation "true" stops an InferenceService: its workloads and
	// routes are removed until the annotation goes (KServe's
	// serving.kserve.io/stop).
	StopAnnotation = "serving.serval.dev/stop"

	// InferenceServiceLabel is set on every child to its InferenceService's name.
	InferenceServiceLabel = "serving.serval.dev/inferenceservice"
	// ComponentLabel is set on every child to its component type.
	ComponentLabel = "serving.serval.dev/component"
	// VisibilityLabel "cluster-local" keeps an InferenceService off the ingress.
	VisibilityLabel = "networking.serval.dev/visibility"
	// VisibilityClusterLocal is the VisibilityLabel value for cluster-local.
	VisibilityClusterLocal = "cluster-local"

	// ScaleFromZeroLabel "true" on a component's workload Service says
	// that the component scales to zero in Standard mode: while it has no
	// ready replica, Serval's activator takes its traffic and holds it.
	ScaleFromZeroLabel = "serving.serval.dev/scale-from-zero"
	// HostsAnnotation on such a Service lists, comma-separated, the hosts
	// its routes receive requests for besides the Service's own DNS
	// names: how the activator knows the component a request is for.
	HostsAnnotation = "serving.serval.dev/hosts"
	// ComponentHeader names, on the requests a route sends to a component
	// that scales from zero, its Service and the UID of the Service's
	// owner ({namespace}/{name}/{uid}), where the host and path name none
	// (an LLMInferenceService's route, through a shared Gateway, with a
	// rewritten path). The route sets it, over any a client sends; the
	// activator takes it only with the owner's UID, which a client of
	// another tenant does not know.
	ComponentHeader = "Serval-Component"
)

// AutoscalerClass is a value of AutoscalerClassAnnotation.
type AutoscalerClass string

// The autoscaler classes.
const (
	AutoscalerHPA      AutoscalerClass = "hpa"
	AutoscalerKPA      AutoscalerClass = "kpa"
	AutoscalerNone     AutoscalerClass = "none"
	AutoscalerExternal AutoscalerClass = "external"
	// AutoscalerKEDA is KServe's KEDA class; not supported by Serval yet.
	AutoscalerKEDA AutoscalerClass = "keda"
)

// NormalizeDeploymentMode maps a deploymentMode value, including KServe's
// legacy names and any letter case, to Standard or Knative. ok is false for an
// unknown value.
func NormalizeDeploymentMode(value string) (mode DeploymentMode, ok bool) {
	switch strings.ToLower(value) {
	case "standard", "rawdeployment":
		return Standard, true
	case "knative", "serverless":
		return Knative, true
	}
	return "", false
}

// DeploymentModeOf returns the mode an InferenceService asks for: its
// annotation, normalised, or def when it has none or an unknown one.
func DeploymentModeOf(isvc *InferenceService, def DeploymentMode) DeploymentMode {
	if mode, ok := NormalizeDeploymentMode(isvc.Annotations[DeploymentModeAnnotation]); ok {
		return mode
	}
	return def
}

// AutoscalerClassOf returns the autoscaler class in effect: the annotation, or
// hpa in Standard mode and kpa in Knative mode.
func AutoscalerClassOf(isvc *InferenceService, mode DeploymentMode) AutoscalerClass {
	if class := isvc.Annotations[AutoscalerClassAnnotation]; class != "" {
		return AutoscalerClass(strings.ToLower(class))
	}
	if mode == Knative {
		return AutoscalerKPA
	}
	return AutoscalerHPA
}

// IsClusterLocal reports whether the InferenceService asks to stay off the ingress.
func IsClusterLocal(isvc *InferenceService) bool {
	return isvc.Labels[VisibilityLabel] == VisibilityClusterLocal
}

// IsStopped reports whether the stop annotation stops the InferenceService:
// its value is "true", in any case, as KServe reads it.
func IsStopped(isvc *InferenceService) bool {
	return strings.EqualFold(isvc.Annotations[StopAnnotation], "true")
}

// StopWarnings warns of a stop annotation whose value is neither true nor
// false (any case): KServe and Serval stop a service only on "true", so
// "yes", "1", "on", "t" or " true" leave it running.
func StopWarnings(annotations map[string]string) []string {
	v, ok := annotations[StopAnnotation]
	if !ok || strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		return nil
	}
	return []string{fmt.Sprintf("metadata.annotations[%s] is %q: only \"true\" (any case) stops the service; it keeps running", StopAnnotation, v)}
}
