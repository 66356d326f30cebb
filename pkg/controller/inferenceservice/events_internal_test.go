package inferenceservice

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestRecordTransitions: an Event for what is news only.
func TestRecordTransitions(t *testing.T) {
	ready := func(ok bool, reason, msg string) v1beta1.InferenceServiceStatus {
		st := v1beta1.InferenceServiceStatus{URL: "http://x"}
		st.Conditions = []metav1.Condition{condition(v1beta1.ConditionReady, ok, reason, msg, 1)}
		return st
	}
	onRuntime := func(st v1beta1.InferenceServiceStatus, rt string) v1beta1.InferenceServiceStatus {
		st.ClusterServingRuntimeName, st.ProtocolVersion = rt, "v1"
		return st
	}
	none := v1beta1.InferenceServiceStatus{}
	rolling := ready(false, v1beta1.ReasonComponentsNotReady, "not ready: PredictorReady (NotAvailable: no replica yet)")
	crashing := ready(false, v1beta1.ReasonComponentsNotReady, "not ready: PredictorReady (NotAvailable: pod p: container c: CrashLoopBackOff)")
	tests := []struct {
		name          string
		before, after v1beta1.InferenceServiceStatus
		failing       bool
		want          []string
	}{
		{"created, rolling out", none, onRuntime(rolling, "rt"), false, nil},
		{"Ready", onRuntime(rolling, "rt"), onRuntime(ready(true, v1beta1.ReasonAllComponentsReady, ""), "rt"), false,
			[]string{"Normal Ready InferenceService is Ready at http://x"}},
		{"still Ready", ready(true, "", ""), ready(true, "", ""), false, nil},
		{"a failure at creation", none, ready(false, "NoSupportingRuntime", "no runtime"), true,
			[]string{"Warning NotReady NoSupportingRuntime: no runtime"}},
		{"a failure after rolling out", rolling, crashing, true,
			[]string{"Warning NotReady ComponentsNotReady: " + crashing.Conditions[0].Message}},
		{"the same failure again", crashing, crashing, true, nil},
		{"unready after Ready", ready(true, "", ""), rolling, false,
			[]string{"Warning NotReady ComponentsNotReady: " + rolling.Conditions[0].Message}},
		{"another runtime", onRuntime(rolling, "old"), onRuntime(rolling, "new"), false,
			[]string{"Normal RuntimeSelected ClusterServingRuntime new serves the model with protocol v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			r := &Reconciler{Recorder: rec}
			r.recordTransitions(&v1beta1.InferenceService{}, &tt.before, &tt.after, tt.failing)
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
