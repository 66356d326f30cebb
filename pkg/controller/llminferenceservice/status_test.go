package llminferenceservice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

func TestHoldFirstStatus(t *testing.T) {
	created := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	notReady := v1alpha2.LLMInferenceServiceStatus{Conditions: []metav1.Condition{{Type: v1alpha2.ConditionReady, Status: metav1.ConditionFalse}}}
	ready := v1alpha2.LLMInferenceServiceStatus{Conditions: []metav1.Condition{{Type: v1alpha2.ConditionReady, Status: metav1.ConditionTrue}}}
	loading := &workload.State{NotAvailableMessage: "0 of 1 replicas are available"}
	for _, c := range []struct {
		name   string
		change func(*scope)
		st     v1alpha2.LLMInferenceServiceStatus
		after  time.Duration
		want   time.Duration
	}{
		{"a new service whose pods are on their way", func(*scope) {}, notReady, time.Second, 4 * time.Second},
		{"a pool no Gateway has looked at yet", func(s *scope) { s.pool = &cond{wait: true, reason: "InferencePoolNotAccepted"} }, notReady, 0, FirstStatusHold},
		{"the hold is over", func(*scope) {}, notReady, FirstStatusHold, 0},
		{"Ready", func(*scope) {}, ready, time.Second, 0},
		{"a status written before", func(s *scope) { s.orig.Status = notReady }, notReady, time.Second, 0},
		{"a failure", func(s *scope) { s.fail(v1alpha2.ConditionPresetsCombined, "ConfigNotFound", "") }, notReady, time.Second, 0},
		{"a child refused", func(s *scope) { s.out.ApplyFailures = map[v1beta1.ComponentType]apply.Failure{"": {}} }, notReady, time.Second, 0},
		{"a conflict", func(s *scope) { s.out.Failure = &pipeline.Failure{Reason: "Conflict"} }, notReady, time.Second, 0},
		{"a missing CRD", func(s *scope) { s.missing[v1alpha2.ConditionInferencePoolReady] = "install it" }, notReady, time.Second, 0},
		{"a failing pod", func(s *scope) { s.workloadState = &workload.State{Problem: &workload.PodProblem{}} }, notReady, time.Second, 0},
		{"a rollout that cannot finish", func(s *scope) { s.schedulerState = &workload.State{RolloutFailed: true} }, notReady, time.Second, 0},
		{"a Gateway that rejects the route", func(s *scope) { s.routes = &cond{reason: "HTTPRouteNotReady"} }, notReady, time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", CreationTimestamp: metav1.NewTime(created)}}
			s := newScope(svc)
			s.workloadState = loading
			c.change(s)
			assert.Equal(t, c.want, holdFirstStatus(s, &c.st, created.Add(c.after)))
		})
	}
}
