package llminferenceservice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// TestClusterLocalURLFollowsTLS: without a Gateway or Ingress address, the
// URL is the workload Service's, https when the model serves TLS.
func TestClusterLocalURLFollowsTLS(t *testing.T) {
	for _, c := range []struct {
		tls  bool
		want string
	}{
		{false, "http://llama-kserve-workload-svc.team.svc.cluster.local:8000"},
		{true, "https://llama-kserve-workload-svc.team.svc.cluster.local:8000"},
	} {
		s := newScope(&v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}})
		s.inputs = llmobjects.Inputs{TLS: c.tls}
		st := &v1alpha2.LLMInferenceServiceStatus{}
		setAddresses(st, s)
		assert.Equal(t, c.want, st.URL)
		assert.Equal(t, "cluster-local", st.Addresses[0].Name)
	}
}

// TestReportable: a reconcile cut short by a transient error before the
// workload was rendered leaves the status as it was (computing one would
// read what was never rendered).
func TestReportable(t *testing.T) {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}}
	s := newScope(svc)
	assert.False(t, s.reportable(), "nothing combined yet")
	s.spec = &v1alpha2.LLMInferenceServiceSpec{}
	assert.False(t, s.reportable(), "combined, not rendered (a Secret that could not be read)")
	s.stopped = true
	assert.True(t, s.reportable(), "stopped: nothing to render")
	s.stopped = false
	s.fail(v1alpha2.ConditionPresetsCombined, "ConfigNotFound", "x")
	assert.True(t, s.reportable(), "a failure to report")
}

// TestGroupWaitBacksOff: a deleted routing-group member looks again after
// one second, then two, four..., and never less often than once a minute;
// a member that left starts again from one second.
func TestGroupWaitBacksOff(t *testing.T) {
	var g groupWaits
	key := types.NamespacedName{Namespace: "team", Name: "llama"}
	var got []time.Duration
	for range 9 {
		got = append(got, groupWaitDelay(g.next(key)))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, time.Minute, time.Minute, time.Minute}, got)
	g.done(key)
	assert.Equal(t, time.Second, groupWaitDelay(g.next(key)))
}
