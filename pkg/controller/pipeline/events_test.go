package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
)

// TestRecordReadiness: an owner that does not report failures separately
// (a graph, an LLM service) gets an Event when it turns Ready and when it
// stops being Ready, never for a step of its rollout.
func TestRecordReadiness(t *testing.T) {
	ready := func(ok bool, reason string) []metav1.Condition {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		return []metav1.Condition{{Type: "Ready", Status: st, Reason: reason, Message: "m"}}
	}
	tests := []struct {
		name          string
		before, after []metav1.Condition
		want          []string
	}{
		{"no Ready condition", nil, nil, nil},
		{"created, rolling out", nil, ready(false, "Waiting"), nil},
		{"a new reason while rolling out", ready(false, "Waiting"), ready(false, "GatewayNotReady"), nil},
		{"Ready", ready(false, "Waiting"), ready(true, "Ready"), []string{"Normal Ready LLMInferenceService is Ready at http://x"}},
		{"still Ready", ready(true, "Ready"), ready(true, "Ready"), nil},
		{"unready after Ready", ready(true, "Ready"), ready(false, "Gone"), []string{"Warning NotReady Gone: m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			pipeline.RecordReadiness(rec, &v1alpha2.LLMInferenceService{}, "LLMInferenceService", "http://x", tt.before, tt.after, false)
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
