package llminferenceservice

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// cond is a condition being computed.
type cond struct {
	ok              bool
	reason, message string
}

// computeStatus is the status the scope's observations call for: KServe's
// conditions, Ready made of PresetsCombined, WorkloadsReady and
// RouterReady, the latter two of theirs.
func computeStatus(s *scope) v1alpha2.LLMInferenceServiceStatus {
	st := *s.svc.Status.DeepCopy()
	gen := s.svc.Generation
	set := func(t string, c cond) {
		status := metav1.ConditionFalse
		if c.ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: status, Reason: c.reason, Message: c.message, ObservedGeneration: gen})
	}
	remove := func(types ...string) {
		for _, t := range types {
			meta.RemoveStatusCondition(&st.Conditions, t)
		}
	}
	if s.groupWait != "" {
		// A deleted member of a routing group: only whom it waits for.
		set(v1alpha2.ConditionGroupReady, cond{reason: "FinalizationPending",
			message: fmt.Sprintf("waiting for the route of %s to stop sending traffic here before deletion", s.groupWait)})
		return st
	}
	if f := s.failure; f != nil {
		if f.condition != v1alpha2.ConditionReady {
			set(f.condition, cond{reason: f.reason, message: f.message})
		}
		set(v1alpha2.ConditionReady, cond{reason: f.reason, message: f.message})
		if f.condition == v1alpha2.ConditionPresetsCombined {
			st.AppliedConfigRefs = s.applied
		}
		return st
	}
	st.AppliedConfigRefs = s.applied
	set(v1alpha2.ConditionPresetsCombined, cond{ok: true, reason: "Combined", message: "merged: " + fmtApplied(s.applied)})
	if s.stopped {
		stoppedConditions(s, set, remove)
		st.Router, st.Workloads, st.Addresses, st.URL = nil, nil, nil, ""
		if g := groupStatus(s); g != nil {
			st.Router = &v1alpha2.RouterStatus{Group: g}
		}
		st.ObservedGeneration = gen
		return st
	}
	if s.out.Failure != nil {
		// A conflicting object: nothing was observed.
		t := v1alpha2.ConditionHTTPRoutesReady
		if p := s.partOf(s.out.Failure.Component); p != nil {
			t = p.Condition()
		} else if s.out.Failure.Component == llmobjects.Scheduler {
			t = v1alpha2.ConditionSchedulerWorkloadReady
		} else if s.out.Failure.Component == llmobjects.Tokenizer {
			t = v1alpha2.ConditionTokenizerReady
		}
		set(t, cond{reason: s.out.Failure.Reason, message: s.out.Failure.Message})
		set(v1alpha2.ConditionReady, cond{reason: s.out.Failure.Reason, message: s.out.Failure.Message})
		return st
	}
	main := workloadConditions(s, set, remove)

	router := []cond{}
	routerSet := func(t string, c cond) { set(t, c); router = append(router, c) }
	if s.refsInvalid != "" {
		// KServe stops before the scheduler: the Gateways' condition says
		// which refs name nothing; the router's other parts are held as
		// they are and not reported.
		remove(v1alpha2.ConditionSchedulerWorkloadReady, v1alpha2.ConditionTokenizerReady,
			v1alpha2.ConditionInferencePoolReady, v1alpha2.ConditionHTTPRoutesReady)
		routerSet(v1alpha2.ConditionGatewaysReady, cond{reason: ReasonRefsInvalid, message: s.refsInvalid})
	} else {
		routerConditions(s, routerSet, remove)
	}
	if s.ingresses != nil {
		// The user's Ingresses have no condition of their own (KServe's
		// have none); one that is missing keeps the router from ready.
		router = append(router, *s.ingresses)
	}
	groupConditions(s, set, remove)
	routerReady := cond{ok: true, reason: "RouterReady", message: "no router configured"}
	if len(router) > 0 {
		routerReady = aggregate(firstFailing(router), "the router routes to the model")
	}
	set(v1alpha2.ConditionRouterReady, routerReady)

	ready := cond{ok: true, reason: "Ready", message: "the model serves"}
	for _, c := range []cond{main, routerReady} {
		if !c.ok {
			ready = c
			break
		}
	}
	set(v1alpha2.ConditionReady, ready)
	setAddresses(&st, s)
	setObserved(&st, s)
	if len(s.out.ApplyFailures) == 0 {
		// A generation whose objects the API server refused is not in
		// force: observedGeneration stays at the last one that is.
		st.ObservedGeneration = gen
	}
	return st
}

// stoppedConditions are those of a stopped service, as KServe sets them:
// each part the spec has is False, reason Stopped, and so are Ready and its
// parents; the parts it has not are removed.
func stoppedConditions(s *scope, set func(string, cond), remove func(...string)) {
	stopped := cond{reason: v1alpha2.ReasonStopped, message: "the service is stopped (" + v1alpha2.StopAnnotation + "): its workloads and routes are removed until the annotation goes"}
	r := s.spec.Router
	parts := map[string]bool{
		v1alpha2.ConditionWorkloadsReady: true,
		v1alpha2.ConditionRouterReady:    true, v1alpha2.ConditionReady: true,
		v1alpha2.ConditionSchedulerWorkloadReady: llmobjects.HasScheduler(s.spec),
		v1alpha2.ConditionTokenizerReady:         llmobjects.HasTokenizer(s.spec),
		v1alpha2.ConditionInferencePoolReady:     r != nil && r.Scheduler != nil,
		v1alpha2.ConditionHTTPRoutesReady:        r != nil && r.Route != nil,
		v1alpha2.ConditionGatewaysReady:          r != nil && r.Route != nil,
	}
	for _, t := range llmobjects.PartConditions() {
		parts[t] = false
	}
	for _, p := range llmobjects.Parts(s.spec) {
		parts[p.Condition()] = true
	}
	parts[v1alpha2.ConditionScalingReady], parts[v1alpha2.ConditionPrefillScalingReady] = false, false
	for t, has := range parts {
		if has {
			set(t, stopped)
		} else {
			remove(t)
		}
	}
	remove(v1alpha2.ConditionGroupReady, v1alpha2.ConditionGroupDegraded)
}

// workloadCondition is a workload's readiness: its Deployment available,
// unless the API server refused its objects. A refused update is not
// ready even while the previous generation's pods serve: the spec asked
// for is not what runs, and a GitOps tool reading Ready must not take it
// as in force.
func workloadCondition(s *scope, t v1beta1.ComponentType, obs *workload.State) cond {
	if f, failed := s.out.ApplyFailures[t]; failed {
		msg := f.Message()
		if obs != nil && obs.Available && !f.Missing {
			msg += " (the previous generation's pods still serve)"
		}
		return cond{reason: f.Reason(), message: msg}
	}
	switch {
	case obs == nil:
		return cond{reason: v1beta1.ReasonNotAvailable, message: "not observed yet"}
	case obs.Available:
		return cond{ok: true, reason: v1beta1.ReasonAvailable, message: "the Deployment is available"}
	case obs.Problem != nil:
		return cond{reason: v1beta1.ReasonNotAvailable, message: obs.Problem.String()}
	}
	return cond{reason: v1beta1.ReasonNotAvailable, message: obs.NotAvailableMessage}
}

// aggregate is a parent condition of c: true with message when c is, else
// c's reason and message.
func aggregate(c cond, message string) cond {
	if c.ok {
		return cond{ok: true, reason: "Ready", message: message}
	}
	return c
}

func firstFailing(cs []cond) cond {
	for _, c := range cs {
		if !c.ok {
			return c
		}
	}
	return cond{ok: true}
}

// setAddresses sets the addresses: through the Gateways, else the
// workload's Service, cluster-local.
func setAddresses(st *v1alpha2.LLMInferenceServiceStatus, s *scope) {
	st.Addresses = s.addresses
	if len(st.Addresses) == 0 {
		st.Addresses = []v1alpha2.Address{{Name: "cluster-local", URL: fmt.Sprintf("%s://%s.%s.svc.cluster.local:%d", llmobjects.Scheme(s.inputs.TLS),
			presets.WorkloadServiceName(s.svc.Name), s.svc.Namespace, llmobjects.ModelPort)}}
	}
	st.URL = st.Addresses[0].URL
}

// setObserved records the workloads and the scheduler's objects.
func setObserved(st *v1alpha2.LLMInferenceServiceStatus, s *scope) {
	primary := v1alpha2.ObjectReference{Group: "apps", Kind: "Deployment", Name: s.parts[0].Name(s.svc.Name)}
	if s.parts[0].MultiNode() {
		primary.Group, primary.Kind = llmobjects.LeaderWorkerSetKind.GVK.Group, llmobjects.LeaderWorkerSetKind.GVK.Kind
	}
	st.Workloads = &v1alpha2.WorkloadStatus{
		Primary: &v1alpha2.ObservedWorkloadStatus{ObjectReference: primary},
		Service: &v1alpha2.ObjectReference{Kind: "Service", Name: presets.WorkloadServiceName(s.svc.Name)},
	}
	if mc := s.inputs.ModelCache; mc != nil {
		ref := mc.Ref
		st.Workloads.ModelCache = &ref
	}
	st.Router = nil
	if s.scheduler != nil {
		st.Workloads.Scheduler = &v1alpha2.ObservedWorkloadStatus{ObjectReference: v1alpha2.ObjectReference{Group: "apps", Kind: "Deployment", Name: s.scheduler.Name}}
		st.Router = &v1alpha2.RouterStatus{Scheduler: &v1alpha2.ObservedSchedulerStatus{
			InferencePool: &v1alpha2.ObjectReference{Group: "inference.networking.k8s.io", Kind: "InferencePool", Name: presets.InferencePoolName(s.svc.Name)},
			Service:       &v1alpha2.ObjectReference{Kind: "Service", Name: presets.EPPServiceName(s.svc.Name)},
		}}
	}
	if g := groupStatus(s); g != nil {
		if st.Router == nil {
			st.Router = &v1alpha2.RouterStatus{}
		}
		st.Router.Group = g
	}
}

// writeStatus writes the status (see statuswriter), and records an Event
// when the service turns Ready or stops being Ready.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	st := computeStatus(s)
	written, err := r.status.Write(ctx, s.svc, s.orig, st)
	if err != nil || !written {
		return err
	}
	pipeline.RecordReadiness(r.Recorder, s.svc, "LLMInferenceService", st.URL, s.orig.Status.Conditions, st.Conditions, false)
	r.recordDivergence(s, &st)
	return nil
}

// routerConditions sets the conditions of the router's parts: the picker,
// the tokenizer, the pool, the routes and the Gateways.
func routerConditions(s *scope, routerSet func(string, cond), remove func(...string)) {
	if s.scheduler != nil {
		routerSet(v1alpha2.ConditionSchedulerWorkloadReady, workloadCondition(s, llmobjects.Scheduler, s.schedulerState))
	} else {
		remove(v1alpha2.ConditionSchedulerWorkloadReady)
	}
	if s.tokenizer != nil {
		routerSet(v1alpha2.ConditionTokenizerReady, workloadCondition(s, llmobjects.Tokenizer, s.tokenizerState))
	} else {
		remove(v1alpha2.ConditionTokenizerReady)
	}
	if msg, missing := s.missing[v1alpha2.ConditionInferencePoolReady]; missing {
		routerSet(v1alpha2.ConditionInferencePoolReady, cond{reason: v1beta1.ReasonMissingCRD, message: msg})
	} else if s.pool != nil {
		routerSet(v1alpha2.ConditionInferencePoolReady, *s.pool)
	} else {
		remove(v1alpha2.ConditionInferencePoolReady)
	}
	if msg, missing := s.missing[v1alpha2.ConditionHTTPRoutesReady]; missing {
		routerSet(v1alpha2.ConditionHTTPRoutesReady, cond{reason: v1beta1.ReasonMissingCRD, message: msg})
	} else if s.routes != nil {
		if f, failed := s.out.ApplyFailures[""]; failed {
			routerSet(v1alpha2.ConditionHTTPRoutesReady, cond{reason: f.Reason(), message: f.Message()})
		} else {
			routerSet(v1alpha2.ConditionHTTPRoutesReady, *s.routes)
		}
	} else {
		remove(v1alpha2.ConditionHTTPRoutesReady)
	}
	if s.gateways != nil {
		routerSet(v1alpha2.ConditionGatewaysReady, *s.gateways)
	} else {
		remove(v1alpha2.ConditionGatewaysReady)
	}
}
