package llminferenceservice

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// TestComputeStatus: the status an LLMInferenceService's observations call
// for, condition by condition, as the InferenceService's table does: each
// row sets up one reconcile's scope and names the conditions that must
// hold (type → status/reason), those that must be absent, and whether the
// generation counts as in force.
func TestComputeStatus(t *testing.T) {
	available := &workload.State{Available: true}
	rendered := func(s *scope) {
		s.spec = &v1alpha2.LLMInferenceServiceSpec{}
		s.applied = []v1alpha2.AppliedConfigRef{{Source: "well-known", Namespace: "serval-system", Name: "kserve-config-llm-template"}}
		for _, p := range llmobjects.Parts(s.spec) {
			s.parts = append(s.parts, &partState{Part: p, state: available})
		}
	}
	withScheduler := func(s *scope) {
		s.spec.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
		s.scheduler = &components.Component{PodSet: components.PodSet{Name: "llama-kserve-router-scheduler"}}
		s.schedulerState = available
		s.pool = &cond{ok: true, reason: "Accepted", message: "the pool is accepted"}
	}
	refused := apply.Failure{Err: errors.New("admission webhook denied the request"), Object: apply.Object{}}
	type want struct {
		status string
		reason string
	}
	cases := []struct {
		name        string
		setup       func(*scope)
		conditions  map[string]want
		absent      []string
		inForce     bool
		readyMsg    string
		appliedRefs bool
	}{
		{name: "serving, no router", setup: rendered, inForce: true, readyMsg: "the model serves", appliedRefs: true,
			conditions: map[string]want{
				v1alpha2.ConditionPresetsCombined: {"True", "Combined"}, v1alpha2.ConditionMainWorkloadReady: {"True", v1beta1.ReasonAvailable},
				v1alpha2.ConditionWorkloadsReady: {"True", "Ready"}, v1alpha2.ConditionRouterReady: {"True", "RouterReady"},
				v1alpha2.ConditionReady: {"True", "Ready"}},
			absent: []string{v1alpha2.ConditionSchedulerWorkloadReady, v1alpha2.ConditionInferencePoolReady, v1alpha2.ConditionHTTPRoutesReady,
				v1alpha2.ConditionGatewaysReady, v1alpha2.ConditionPrefillWorkloadReady, v1alpha2.ConditionScalingReady}},
		{name: "a preset not found", setup: func(s *scope) { s.fail(v1alpha2.ConditionPresetsCombined, "ConfigNotFound", "no preset x") },
			readyMsg: "no preset x", appliedRefs: false,
			conditions: map[string]want{v1alpha2.ConditionPresetsCombined: {"False", "ConfigNotFound"}, v1alpha2.ConditionReady: {"False", "ConfigNotFound"}},
			absent:     []string{v1alpha2.ConditionWorkloadsReady, v1alpha2.ConditionRouterReady}},
		{name: "a spec that does not decode", setup: func(s *scope) { s.fail(v1alpha2.ConditionReady, "UndecodableSpec", "spec: bad") },
			readyMsg:   "spec: bad",
			conditions: map[string]want{v1alpha2.ConditionReady: {"False", "UndecodableSpec"}},
			absent:     []string{v1alpha2.ConditionPresetsCombined}},
		{name: "the model workload not available", setup: func(s *scope) {
			rendered(s)
			s.parts[0].state = &workload.State{NotAvailableMessage: "0 of 1 replicas available"}
		}, inForce: true, readyMsg: "0 of 1 replicas available", appliedRefs: true,
			conditions: map[string]want{v1alpha2.ConditionMainWorkloadReady: {"False", v1beta1.ReasonNotAvailable},
				v1alpha2.ConditionWorkloadsReady: {"False", v1beta1.ReasonNotAvailable}, v1alpha2.ConditionReady: {"False", v1beta1.ReasonNotAvailable}}},
		{name: "the model workload refused, its old pods serving", setup: func(s *scope) {
			rendered(s)
			s.out.ApplyFailures = map[v1beta1.ComponentType]apply.Failure{llmobjects.Workload: refused}
		}, inForce: false, appliedRefs: true,
			readyMsg: "applying " + refused.Object.String() + " failed: admission webhook denied the request (the previous generation's pods still serve)",
			conditions: map[string]want{v1alpha2.ConditionMainWorkloadReady: {"False", apply.ReasonFailed},
				v1alpha2.ConditionReady: {"False", apply.ReasonFailed}}},
		{name: "a scheduler, its pool accepted", setup: func(s *scope) { rendered(s); withScheduler(s) }, inForce: true, appliedRefs: true,
			readyMsg: "the model serves",
			conditions: map[string]want{v1alpha2.ConditionSchedulerWorkloadReady: {"True", v1beta1.ReasonAvailable},
				v1alpha2.ConditionInferencePoolReady: {"True", "Accepted"}, v1alpha2.ConditionRouterReady: {"True", "Ready"},
				v1alpha2.ConditionReady: {"True", "Ready"}}},
		{name: "a scheduler without the InferencePool CRD", setup: func(s *scope) {
			rendered(s)
			withScheduler(s)
			s.missing[v1alpha2.ConditionInferencePoolReady] = "the CRD inferencepools.inference.networking.k8s.io is not installed"
		}, inForce: true, appliedRefs: true, readyMsg: "the CRD inferencepools.inference.networking.k8s.io is not installed",
			conditions: map[string]want{v1alpha2.ConditionInferencePoolReady: {"False", v1beta1.ReasonMissingCRD},
				v1alpha2.ConditionRouterReady: {"False", v1beta1.ReasonMissingCRD}, v1alpha2.ConditionReady: {"False", v1beta1.ReasonMissingCRD},
				v1alpha2.ConditionWorkloadsReady: {"True", "Ready"}}},
		{name: "routes not accepted", setup: func(s *scope) {
			rendered(s)
			s.spec.Router = &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{}}
			s.routes = &cond{reason: "RouteNotAccepted", message: "the Gateway has not accepted the route"}
		}, inForce: true, appliedRefs: true, readyMsg: "the Gateway has not accepted the route",
			conditions: map[string]want{v1alpha2.ConditionHTTPRoutesReady: {"False", "RouteNotAccepted"},
				v1alpha2.ConditionRouterReady: {"False", "RouteNotAccepted"}, v1alpha2.ConditionReady: {"False", "RouteNotAccepted"}}},
		{name: "the routes refused", setup: func(s *scope) {
			rendered(s)
			s.routes = &cond{ok: true, reason: "Accepted"}
			s.out.ApplyFailures = map[v1beta1.ComponentType]apply.Failure{"": refused}
		}, inForce: false, appliedRefs: true, readyMsg: "applying " + refused.Object.String() + " failed: admission webhook denied the request",
			conditions: map[string]want{v1alpha2.ConditionHTTPRoutesReady: {"False", apply.ReasonFailed}, v1alpha2.ConditionReady: {"False", apply.ReasonFailed}}},
		{name: "a conflicting object on the scheduler", setup: func(s *scope) {
			rendered(s)
			s.out.Failure = &pipeline.Failure{Component: llmobjects.Scheduler, Reason: "ConflictingObject", Message: "the Deployment x is not Serval's"}
		}, appliedRefs: true, readyMsg: "the Deployment x is not Serval's",
			conditions: map[string]want{v1alpha2.ConditionSchedulerWorkloadReady: {"False", "ConflictingObject"},
				v1alpha2.ConditionReady: {"False", "ConflictingObject"}}},
		{name: "stopped", setup: func(s *scope) {
			rendered(s)
			s.parts = nil // nothing is rendered when stopped
			s.stopped = true
		}, inForce: true, appliedRefs: true,
			readyMsg: "the service is stopped (" + v1alpha2.StopAnnotation + "): its workloads and routes are removed until the annotation goes",
			conditions: map[string]want{v1alpha2.ConditionMainWorkloadReady: {"False", v1alpha2.ReasonStopped},
				v1alpha2.ConditionWorkloadsReady: {"False", v1alpha2.ReasonStopped}, v1alpha2.ConditionReady: {"False", v1alpha2.ReasonStopped}},
			absent: []string{v1alpha2.ConditionSchedulerWorkloadReady, v1alpha2.ConditionHTTPRoutesReady}},
		{name: "a deleted member of a routing group", setup: func(s *scope) { s.groupWait = "team/other" },
			conditions: map[string]want{v1alpha2.ConditionGroupReady: {"False", "FinalizationPending"}},
			absent:     []string{v1alpha2.ConditionReady}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team", Generation: 3}}
			svc.Status.ObservedGeneration = 2
			s := newScope(svc)
			tc.setup(s)
			st := computeStatus(s)
			for typ, w := range tc.conditions {
				c := meta.FindStatusCondition(st.Conditions, typ)
				require.NotNil(t, c, "condition %s", typ)
				assert.Equal(t, w.status, string(c.Status), "%s: %s", typ, c.Message)
				assert.Equal(t, w.reason, c.Reason, "%s: %s", typ, c.Message)
				assert.Equal(t, int64(3), c.ObservedGeneration, typ)
			}
			for _, typ := range tc.absent {
				assert.Nil(t, meta.FindStatusCondition(st.Conditions, typ), "no %s", typ)
			}
			if r := meta.FindStatusCondition(st.Conditions, v1alpha2.ConditionReady); r != nil && tc.readyMsg != "" {
				assert.Equal(t, tc.readyMsg, r.Message)
			}
			want := int64(2)
			if tc.inForce {
				want = 3
			}
			assert.Equal(t, want, st.ObservedGeneration, "observedGeneration")
			assert.Equal(t, tc.appliedRefs, len(st.AppliedConfigRefs) > 0, "appliedConfigRefs")
		})
	}
}
