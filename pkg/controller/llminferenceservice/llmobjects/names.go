package llmobjects

import (
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
)

// The components of an LLMInferenceService, as the pipeline and the status
// name them; routes belong to none.
const (
	// Workload is the model workload.
	Workload v1beta1.ComponentType = "workload"
	// Scheduler is the endpoint picker.
	Scheduler v1beta1.ComponentType = "router-scheduler"
)

// WorkloadName is the model workload's Deployment.
func WorkloadName(svc string) string { return kmeta.ChildName(svc, "-kserve") }

// SchedulerName is the endpoint picker's Deployment.
func SchedulerName(svc string) string { return kmeta.ChildName(svc, "-kserve-router-scheduler") }

// RouteName is the managed HTTPRoute.
func RouteName(svc string) string { return kmeta.ChildName(svc, "-kserve-route") }

func roleBindingName(svc string) string { return kmeta.ChildName(svc, "-epp-rb") }

// commonLabels are on every child: the owner's label, and KServe's
// app.kubernetes.io labels.
func commonLabels(svc *v1alpha2.LLMInferenceService, component v1beta1.ComponentType) map[string]string {
	return map[string]string{
		v1alpha2.LLMInferenceServiceLabel: svc.Name,
		"app.kubernetes.io/name":          svc.Name,
		"app.kubernetes.io/part-of":       "llminferenceservice",
		v1beta1.ComponentLabel:            string(component),
	}
}

// workloadSelector selects the model pods: the labels the InferencePool
// selects, and the owner's.
func workloadSelector(svc *v1alpha2.LLMInferenceService) map[string]string {
	s := presets.WorkloadSelector(svc.Name)
	s[v1alpha2.LLMInferenceServiceLabel] = svc.Name
	return s
}
