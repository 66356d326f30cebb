package llmobjects

import (
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// The model workloads beyond the main single-node one, as the pipeline
// and the status name them.
const (
	// WorkerWorkload is the main workload across nodes: a LeaderWorkerSet.
	WorkerWorkload v1beta1.ComponentType = "workload-worker"
	// PrefillWorkload is the prefill Deployment.
	PrefillWorkload v1beta1.ComponentType = "prefill"
	// PrefillWorkerWorkload is the prefill LeaderWorkerSet.
	PrefillWorkerWorkload v1beta1.ComponentType = "prefill-worker"
)

// KServe's labels on the model pods: llm-d's role (what the picker's
// prefill and decode filters select on) and the pod's part.
const (
	// RoleLabel is llm-d's role of a model pod: prefill, decode or both.
	RoleLabel = "llm-d.ai/role"
	// AppComponentLabel names the part a pod belongs to.
	AppComponentLabel = "app.kubernetes.io/component"
)

// Part is one of a service's model workloads: the main one (it decodes
// when there is a prefill workload) or the prefill one. Each runs a replica
// on one node (a Deployment) or, with a worker, across nodes (a
// LeaderWorkerSet).
type Part struct {
	// Prefill: the prefill workload, else the main one.
	Prefill bool
	// Spec is the part's workload spec in the combined spec.
	Spec *v1alpha2.WorkloadSpec
	// disaggregated: the service has a prefill workload.
	disaggregated bool
}

// Parts are the workloads of a combined spec: the main one, then the
// prefill one when there is one.
func Parts(spec *v1alpha2.LLMInferenceServiceSpec) []Part {
	pd := spec.Prefill != nil
	out := []Part{{Spec: &spec.WorkloadSpec, disaggregated: pd}}
	if pd {
		out = append(out, Part{Prefill: true, Spec: spec.Prefill, disaggregated: true})
	}
	return out
}

// MultiNode reports whether a replica spans nodes (a LeaderWorkerSet).
func (p Part) MultiNode() bool { return p.Spec.Worker != nil }

// hasLeader reports whether the part's template runs pods: a Deployment's,
// or a LeaderWorkerSet's leaders. Without one, a LeaderWorkerSet's workers
// serve.
func (p Part) hasLeader() bool { return p.Spec.Template != nil && len(p.Spec.Template.Containers) > 0 }

// Component is the part's component type.
func (p Part) Component() v1beta1.ComponentType {
	switch {
	case p.Prefill && p.MultiNode():
		return PrefillWorkerWorkload
	case p.Prefill:
		return PrefillWorkload
	case p.MultiNode():
		return WorkerWorkload
	}
	return Workload
}

// Condition is the part's readiness condition, KServe's.
func (p Part) Condition() string {
	return partConditions[p.Component()]
}

var partConditions = map[v1beta1.ComponentType]string{
	Workload: v1alpha2.ConditionMainWorkloadReady, WorkerWorkload: v1alpha2.ConditionWorkerWorkloadReady,
	PrefillWorkload: v1alpha2.ConditionPrefillWorkloadReady, PrefillWorkerWorkload: v1alpha2.ConditionPrefillWorkerWorkloadReady,
}

// PartConditions are the readiness conditions of every kind of part.
func PartConditions() []string {
	return []string{v1alpha2.ConditionMainWorkloadReady, v1alpha2.ConditionWorkerWorkloadReady,
		v1alpha2.ConditionPrefillWorkloadReady, v1alpha2.ConditionPrefillWorkerWorkloadReady}
}

// ScalingCondition is the condition of the part's autoscaler.
func (p Part) ScalingCondition() string {
	if p.Prefill {
		return v1alpha2.ConditionPrefillScalingReady
	}
	return v1alpha2.ConditionScalingReady
}

// Name is the part's Deployment or LeaderWorkerSet, KServe's names.
func (p Part) Name(svc string) string {
	switch p.Component() {
	case WorkerWorkload:
		return kmeta.ChildName(svc, "-kserve-mn")
	case PrefillWorkload:
		return kmeta.ChildName(svc, "-kserve-prefill")
	case PrefillWorkerWorkload:
		return kmeta.ChildName(svc, "-kserve-mn-prefill")
	}
	return WorkloadName(svc)
}

// HPAName is the part's HorizontalPodAutoscaler, KServe's name.
func (p Part) HPAName(svc string) string {
	if p.Prefill {
		return kmeta.ChildName(svc, "-kserve-prefill-hpa")
	}
	return kmeta.ChildName(svc, "-kserve-hpa")
}

// ScaledObjectName is the part's KEDA ScaledObject, KServe's name.
func (p Part) ScaledObjectName(svc string) string {
	if p.Prefill {
		return kmeta.ChildName(svc, "-kserve-prefill-keda")
	}
	return kmeta.ChildName(svc, "-kserve-keda")
}

// Role is llm-d's role of the part's serving pods.
func (p Part) Role() string {
	switch {
	case p.Prefill:
		return "prefill"
	case p.disaggregated:
		return "decode"
	}
	return "both"
}

// appComponent is KServe's app.kubernetes.io/component of the part's
// pods: of its Deployment's, or of its leaders' or workers'.
func (p Part) appComponent(worker bool) string {
	base := "llminferenceservice-workload"
	switch {
	case p.MultiNode() && worker:
		base += "-worker"
	case p.MultiNode():
		base += "-leader"
	}
	if p.Prefill {
		base += "-prefill"
	}
	return base
}

// selector selects the part's serving pods. The main Deployment keeps the
// selector it always had; the others add their part, so that no two
// Deployments select the same pods. Every serving pod carries the pool's
// labels (WorkloadSelector), prefill and decode alike: the picker tells
// them apart by RoleLabel.
func (p Part) selector(svc *v1alpha2.LLMInferenceService) map[string]string {
	s := workloadSelector(svc)
	if p.Component() != Workload {
		s[AppComponentLabel] = p.appComponent(false)
	}
	return s
}

// podLabels are the labels of the part's serving pods (its Deployment's,
// or its leaders'): the selector's, its part and its role.
func (p Part) podLabels(svc *v1alpha2.LLMInferenceService) map[string]string {
	l := p.selector(svc)
	l[AppComponentLabel] = p.appComponent(false)
	l[RoleLabel] = p.Role()
	return l
}

// workerLabels are the labels of a LeaderWorkerSet's worker pods: their
// part and owner; with no leader template the workers serve, and carry
// the serving labels too (KServe's rule).
func (p Part) workerLabels(svc *v1alpha2.LLMInferenceService) map[string]string {
	if !p.hasLeader() {
		l := p.podLabels(svc)
		l[AppComponentLabel] = p.appComponent(true)
		return l
	}
	return map[string]string{
		v1alpha2.LLMInferenceServiceLabel: svc.Name, "app.kubernetes.io/name": svc.Name,
		"app.kubernetes.io/part-of": "llminferenceservice", AppComponentLabel: p.appComponent(true),
	}
}
