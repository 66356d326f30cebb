package inferenceservice

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// componentConditions maps each component to its readiness condition.
var componentConditions = map[v1beta1.ComponentType]string{
	v1beta1.PredictorComponent:   v1beta1.ConditionPredictorReady,
	v1beta1.TransformerComponent: v1beta1.ConditionTransformerReady,
	v1beta1.ExplainerComponent:   v1beta1.ConditionExplainerReady,
}

// computeStatus returns the status the scope's observations call for. It
// starts from the current status so that fields a failed phase could not
// compute (the chosen runtime, say) keep their last known value.
func computeStatus(s *scope) v1beta1.InferenceServiceStatus {
	st := *s.isvc.Status.DeepCopy()
	gen := s.isvc.Generation
	if s.isvc.DecodeError != "" {
		setUndecodableCondition(&st, s.isvc.DecodeError, gen)
		return st
	}
	if s.stopped && s.failure == nil {
		return stoppedStatus(&st, s, gen)
	}
	if s.failure != nil {
		setFailureConditions(&st, s.failure, gen)
	} else if s.out.Observed != nil {
		// The children were observed; otherwise an error stopped the phases
		// before, and the conditions keep their last observed values.
		for _, c := range s.comps {
			setComponentReadyCondition(&st, c.Type, s.out.Observed[c.Type], s.out.ApplyFailures, gen)
		}
		setLatestDeploymentReadyCondition(&st, s.comps, s.out.Observed, s.out.ApplyFailures, gen)
		setModelStatus(&st, s.out.Observed[v1beta1.PredictorComponent])
		setAddresses(&st, s.plan, s.out.Routes)
		setComponentStatus(&st, s)
		setCanaryStatus(&st, s, gen)
		setIngressReadyCondition(&st, s, gen)
		if st.DeploymentMode == "" {
			st.DeploymentMode = s.mode
		}
	}
	removeAbsentComponents(&st, s.defaulted)
	setReadyCondition(&st, s.defaulted, s.failure, gen)
	setRuntime(&st, s)
	setConfigValidCondition(&st, s.cfgErrors, s.templateFailure, gen)
	if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionStopped) != nil {
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionStopped, false, v1beta1.ReasonResumed,
			"the stop annotation is gone: the workloads and routes are back", gen))
	}
	if s.reconciled && len(s.out.ApplyFailures) == 0 {
		// A generation whose objects the API server refused is not in
		// force (LatestDeploymentReady says why): observedGeneration
		// stays at the last one that is.
		st.ObservedGeneration = gen
	}
	return st
}

// stoppedStatus is the status of a stopped InferenceService, as KServe
// writes it: what the children reported is cleared, the components and
// the route say Stopped, Stopped is True and Ready False. The deployment
// mode and the runtime stay, so that a resumed service keeps them.
func stoppedStatus(st *v1beta1.InferenceServiceStatus, s *scope, gen int64) v1beta1.InferenceServiceStatus {
	const msg = "the InferenceService is stopped (" + v1beta1.StopAnnotation + "): its workloads and routes are removed until the annotation goes"
	out := v1beta1.InferenceServiceStatus{DeploymentMode: st.DeploymentMode,
		ClusterServingRuntimeName: st.ClusterServingRuntimeName, ServingRuntimeName: st.ServingRuntimeName, ProtocolVersion: st.ProtocolVersion}
	if out.DeploymentMode == "" {
		out.DeploymentMode = s.mode
	}
	if splitInProgress(s) {
		// The revisions and the split stay, for the resume (see
		// parkedPredictor); the URL and the rest went with the children.
		cs := st.Components[v1beta1.PredictorComponent]
		out.Components = map[v1beta1.ComponentType]v1beta1.ComponentStatus{v1beta1.PredictorComponent: {
			LatestRolledoutRevision: cs.LatestRolledoutRevision, LatestCreatedRevision: cs.LatestCreatedRevision,
			PreviousRolledoutRevision: cs.PreviousRolledoutRevision, Traffic: cs.Traffic}}
	}
	for _, t := range []string{v1beta1.ConditionPredictorReady, v1beta1.ConditionIngressReady, v1beta1.ConditionReady} {
		meta.SetStatusCondition(&out.Conditions, condition(t, false, v1beta1.ReasonStopped, msg, gen))
	}
	meta.SetStatusCondition(&out.Conditions, condition(v1beta1.ConditionStopped, true, v1beta1.ReasonStopped, msg, gen))
	setConfigValidCondition(&out, s.cfgErrors, s.templateFailure, gen)
	if s.reconciled {
		out.ObservedGeneration = gen
	}
	return out
}

func condition(t string, ok bool, reason, msg string, gen int64) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen}
}

// setUndecodableCondition reports a stored spec that does not decode. Only
// Ready changes: the children are left as they are, so the other conditions
// keep their last observed values.
func setUndecodableCondition(st *v1beta1.InferenceServiceStatus, decodeErr string, gen int64) {
	meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionReady, false, v1beta1.ReasonUndecodableSpec,
		"the stored spec does not decode, so Serval leaves the children as they are: "+decodeErr+
			"; fix the field (kubectl edit) or delete the InferenceService", gen))
}

// setFailureConditions reports a failure that stopped the reconcile on the
// component it concerns (on IngressReady when it concerns a route) and, for
// the predictor, in modelStatus.
func setFailureConditions(st *v1beta1.InferenceServiceStatus, f *pipeline.Failure, gen int64) {
	t, ok := componentConditions[f.Component]
	if !ok {
		t = v1beta1.ConditionIngressReady
	}
	meta.SetStatusCondition(&st.Conditions, condition(t, false, f.Reason, f.Message, gen))
	if f.Component == v1beta1.PredictorComponent {
		st.ModelStatus.TransitionStatus = v1beta1.TransitionInvalidSpec
		st.ModelStatus.LastFailureInfo = &v1beta1.FailureInfo{Reason: v1beta1.FailureReason(f.Reason), Message: f.Message}
	}
}

// setComponentReadyCondition: a component is ready when its workload serves
// (a Deployment Available, a Knative Service Ready). A component that does
// not serve because the API server refused its objects says so.
func setComponentReadyCondition(st *v1beta1.InferenceServiceStatus, t v1beta1.ComponentType, obs workload.State,
	failures map[v1beta1.ComponentType]apply.Failure, gen int64) {
	reason, msg := v1beta1.ReasonAvailable, ""
	f, failed := failures[t]
	// A replica that serves keeps the component available through a failed
	// update (reported on LatestDeploymentReady), but not without an object
	// it needs: a Service that could not be created leaves it unreachable.
	available := obs.Available && !(failed && f.Missing)
	if !available {
		reason, msg = v1beta1.ReasonNotAvailable, obs.NotAvailableMessage
		if obs.Problem != nil {
			msg = obs.Problem.String()
		}
		if failed {
			reason, msg = f.Reason(), f.Message()
		}
	}
	meta.SetStatusCondition(&st.Conditions, condition(componentConditions[t], available, reason, msg, gen))
	if obs.ScaledToZero {
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ScaledToZeroCondition(t), true, v1beta1.ReasonNoDemand,
			workload.ScaledToZeroMessage, gen))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ScaledToZeroCondition(t))
	}
}

// setLatestDeploymentReadyCondition says whether the latest spec of every
// component is rolled out; while old pods keep serving, a failing new pod,
// or objects the API server refused, are reported here.
func setLatestDeploymentReadyCondition(st *v1beta1.InferenceServiceStatus, comps []*components.Component,
	observed map[v1beta1.ComponentType]workload.State, failures map[v1beta1.ComponentType]apply.Failure, gen int64) {
	for _, c := range comps {
		if f, ok := failures[c.Type]; ok {
			meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionLatestDeploymentReady, false, f.Reason(),
				fmt.Sprintf("%s: %s", c.Name, f.Message()), gen))
			return
		}
	}
	for _, c := range comps {
		obs := observed[c.Type]
		if obs.RolledOut {
			continue
		}
		reason := v1beta1.ReasonProgressing
		if obs.RolloutFailed {
			reason = v1beta1.ReasonRolloutFailed
		}
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionLatestDeploymentReady, false, reason,
			fmt.Sprintf("%s: %s", c.Name, obs.RolloutMessage), gen))
		return
	}
	meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionLatestDeploymentReady, true, v1beta1.ReasonRolledOut, "", gen))
}

// setModelStatus derives the model's state from the predictor's workload.
func setModelStatus(st *v1beta1.InferenceServiceStatus, obs workload.State) {
	ms := &st.ModelStatus
	ms.States = &v1beta1.ModelRevisionStates{TargetModelState: v1beta1.ModelLoaded}
	ok, done, problem := obs.Available, obs.RolledOut, obs.Problem
	switch {
	case problem != nil && problem.Unschedulable():
		// The model has not been tried yet: its pod waits for a node.
		ms.States.ActiveModelState = v1beta1.ModelPending
		if ok {
			ms.States.ActiveModelState = v1beta1.ModelLoaded
		}
		ms.TransitionStatus = v1beta1.TransitionInProgress
		ms.LastFailureInfo = &v1beta1.FailureInfo{Location: problem.Pod, Reason: v1beta1.PodUnschedulable, Message: problem.String()}
		return
	case problem != nil:
		ms.States.ActiveModelState = v1beta1.ModelFailedToLoad
		if ok {
			ms.States.ActiveModelState = v1beta1.ModelLoaded
		}
		ms.TransitionStatus = v1beta1.TransitionBlockedByFailedLoad
		ms.LastFailureInfo = &v1beta1.FailureInfo{Location: problem.Pod, Reason: v1beta1.ModelLoadFailed,
			Message: problem.String(), ExitCode: problem.ExitCode}
		return
	case ok:
		ms.States.ActiveModelState = v1beta1.ModelLoaded
	case obs.Loading:
		ms.States.ActiveModelState = v1beta1.ModelLoading
	default:
		ms.States.ActiveModelState = v1beta1.ModelPending
	}
	ms.TransitionStatus = v1beta1.TransitionInProgress
	if ok && done {
		ms.TransitionStatus = v1beta1.TransitionUpToDate
	}
	ms.LastFailureInfo = nil
}

// setAddresses sets the URLs from the route plan: url is external (the
// cluster-local address for a cluster-local InferenceService), address.url
// always the cluster-local one; a router that decides the top-level
// addresses itself (Knative's routes, Istio's hosts) overrides them.
func setAddresses(st *v1beta1.InferenceServiceStatus, plan *ingress.Plan, routes ingress.Readiness) {
	st.Components = map[v1beta1.ComponentType]v1beta1.ComponentStatus{}
	for _, r := range plan.Components {
		st.Components[r.Component] = v1beta1.ComponentStatus{URL: r.URL, Address: &v1beta1.Addressable{URL: r.ClusterURL}}
	}
	st.URL = plan.Top.URL
	st.Address = &v1beta1.Addressable{URL: plan.Top.ClusterURL}
	if routes.URL != "" {
		st.URL = routes.URL
	}
	if routes.ClusterURL != "" {
		st.Address = &v1beta1.Addressable{URL: routes.ClusterURL}
	}
}

// setComponentStatus adds what the mode knows of each component (Knative's
// URLs, revisions and traffic) to the addresses.
func setComponentStatus(st *v1beta1.InferenceServiceStatus, s *scope) {
	for _, c := range s.comps {
		cs := st.Components[c.Type]
		s.workload.ComponentStatus(&cs, s.history.Components[c.Type], s.out.Observed[c.Type])
		cs.ModelCache = c.ModelCache
		st.Components[c.Type] = cs
	}
}

// setIngressReadyCondition: the routes' readiness as the router reads it
// (True at once for a cluster-local InferenceService, which needs no route),
// or False naming the CRD the chosen router needs but the cluster lacks.
func setIngressReadyCondition(st *v1beta1.InferenceServiceStatus, s *scope, gen int64) {
	c := condition(v1beta1.ConditionIngressReady, s.out.Routes.Ready, s.out.Routes.Reason, s.out.Routes.Message, gen)
	if f, ok := s.out.ApplyFailures[""]; ok {
		c = condition(v1beta1.ConditionIngressReady, false, f.Reason(), f.Message(), gen)
	}
	if k := s.out.MissingRouteKind; k != nil {
		c = condition(v1beta1.ConditionIngressReady, false, v1beta1.ReasonMissingCRD,
			k.MissingMessage("serval-config routes InferenceServices with "+k.GVK.Kind), gen)
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// removeAbsentComponents drops the conditions and status of components the
// spec no longer has (a removed transformer).
func removeAbsentComponents(st *v1beta1.InferenceServiceStatus, isvc *v1beta1.InferenceService) {
	for t, cond := range componentConditions {
		if isvc.Spec.Extension(t) == nil {
			meta.RemoveStatusCondition(&st.Conditions, cond)
			delete(st.Components, t)
		}
	}
}

// setReadyCondition: Ready when no failure stopped the reconcile and every
// component's readiness condition is True. LatestDeploymentReady is not part
// of it: old pods may serve while a new spec rolls out.
func setReadyCondition(st *v1beta1.InferenceServiceStatus, isvc *v1beta1.InferenceService, f *pipeline.Failure, gen int64) {
	if f != nil {
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionReady, false, f.Reason, f.Message, gen))
		return
	}
	var notReady []string
	types := []string{v1beta1.ConditionIngressReady}
	for _, t := range isvc.Spec.Components() {
		types = append(types, componentConditions[t])
	}
	for _, t := range types {
		c := meta.FindStatusCondition(st.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue {
			detail := t
			if c != nil && c.Message != "" {
				detail += " (" + c.Reason + ": " + c.Message + ")"
			}
			notReady = append(notReady, detail)
		}
	}
	if len(notReady) == 0 {
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionReady, true, v1beta1.ReasonAllComponentsReady, "", gen))
		return
	}
	meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionReady, false, v1beta1.ReasonComponentsNotReady,
		"not ready: "+strings.Join(notReady, "; "), gen))
}

// setConfigValidCondition reports a rejected serval-config, naming each bad
// key, or an ingress template that renders an invalid host or path for
// this service (templateFailure); the condition goes away once fixed.
func setConfigValidCondition(st *v1beta1.InferenceServiceStatus, errs []config.KeyError, templateFailure string, gen int64) {
	switch {
	case len(errs) > 0:
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionConfigValid, false, v1beta1.ReasonInvalidConfig,
			"the last good configuration is in force: "+config.Describe(errs), gen))
	case templateFailure != "":
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionConfigValid, false, v1beta1.ReasonInvalidHost, templateFailure, gen))
	default:
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionConfigValid)
	}
}

// setRuntime records the chosen runtime and protocol.
func setRuntime(st *v1beta1.InferenceServiceStatus, s *scope) {
	if s.selection == nil {
		if s.failure == nil && s.defaulted.Spec.Predictor.Model == nil {
			st.ServingRuntimeName, st.ClusterServingRuntimeName, st.ProtocolVersion = "", "", ""
		}
		return
	}
	rt := s.selection.Runtime
	st.ServingRuntimeName, st.ClusterServingRuntimeName = "", ""
	if rt.Namespaced {
		st.ServingRuntimeName = rt.Name
	} else {
		st.ClusterServingRuntimeName = rt.Name
	}
	st.ProtocolVersion = s.selection.Protocol
}
