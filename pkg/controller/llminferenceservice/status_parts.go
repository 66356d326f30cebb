package llminferenceservice

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// workloadConditions sets each model workload's condition and its
// autoscaler's, removes those of the parts the service does not have, and
// sets WorkloadsReady from them (KServe's rollup: the first that is False).
// It returns WorkloadsReady.
func workloadConditions(s *scope, set func(string, cond), remove func(...string)) cond {
	have := map[string]bool{}
	var all []cond
	for _, p := range s.parts {
		c := partCondition(s, p)
		set(p.Condition(), c)
		have[p.Condition()] = true
		all = append(all, c)
		if p.Spec.Scaling == nil {
			continue
		}
		sc := cond{reason: "ScalingProgressing", message: "the autoscaler is not observed yet"}
		switch msg, missing := s.missing[p.ScalingCondition()]; {
		case missing:
			sc = cond{reason: v1beta1.ReasonMissingCRD, message: msg}
		case p.scaling != nil:
			sc = *p.scaling
		}
		set(p.ScalingCondition(), sc)
		have[p.ScalingCondition()] = true
		all = append(all, sc)
	}
	for _, t := range append(llmobjects.PartConditions(), v1alpha2.ConditionScalingReady, v1alpha2.ConditionPrefillScalingReady) {
		if !have[t] {
			remove(t)
		}
	}
	if main := s.partOf(llmobjects.Workload); main != nil && main.state != nil && main.state.ScaledToZero {
		set(v1alpha2.ConditionMainWorkloadScaledToZero, cond{ok: true, reason: v1beta1.ReasonNoDemand,
			message: workload.ScaledToZeroMessage})
	} else {
		remove(v1alpha2.ConditionMainWorkloadScaledToZero)
	}
	workloads := aggregate(firstFailing(all), "the model workloads are available")
	set(v1alpha2.ConditionWorkloadsReady, workloads)
	return workloads
}

// partCondition is a model workload's readiness: its CRD missing, the API
// server refusing its objects, or its Deployment's or LeaderWorkerSet's
// availability.
func partCondition(s *scope, p *partState) cond {
	if msg, missing := s.missing[p.Condition()]; missing {
		return cond{reason: v1beta1.ReasonMissingCRD, message: msg}
	}
	c := workloadCondition(s, p.Component(), p.state)
	if c.ok && p.MultiNode() {
		c.message = "the LeaderWorkerSet is available"
	}
	return c
}

// partOf is the model workload of a component type; nil for the picker,
// the tokenizer and the routes.
func (s *scope) partOf(t v1beta1.ComponentType) *partState {
	for _, p := range s.parts {
		if p.Component() == t {
			return p
		}
	}
	return nil
}
