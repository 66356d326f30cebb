package knative

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

func ksvc(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"status": status}}
}

func cond(t, status string, reasonMessage ...string) map[string]any {
	c := map[string]any{"type": t, "status": status}
	if len(reasonMessage) == 2 {
		c["reason"], c["message"] = reasonMessage[0], reasonMessage[1]
	}
	return c
}

func TestStateOf(t *testing.T) {
	ready := []any{cond("Ready", "True"), cond("ConfigurationsReady", "True"), cond("RoutesReady", "True")}
	tests := []struct {
		name                       string
		status                     map[string]any
		available, rolledOut       bool
		url, notAvailable, rollout string
	}{
		{"no status yet", nil, false, false, "", "the Knative Service has not reported Ready", "the Knative Service has not reported RoutesReady"},
		{"ready", map[string]any{"conditions": ready, "url": "http://kn.example.com",
			"latestReadyRevisionName": "kn-00002", "latestCreatedRevisionName": "kn-00002"}, true, true, "http://kn.example.com", "", ""},
		{"a new revision not ready while the old one serves", map[string]any{"conditions": ready, "url": "http://kn.example.com",
			"latestReadyRevisionName": "kn-00001", "latestCreatedRevisionName": "kn-00002"}, true, false, "http://kn.example.com", "", "the latest revision is rolling out"},
		{"route not ready says why", map[string]any{"conditions": []any{cond("Ready", "False", "RevisionMissing", "no revision"),
			cond("RoutesReady", "False", "IngressNotConfigured", "Ingress has not yet been reconciled.")}}, false, false, "",
			"RevisionMissing: no revision", "IngressNotConfigured: Ingress has not yet been reconciled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StateOf(ksvc(tt.status), nil)
			assert.Equal(t, tt.available, st.Available)
			assert.Equal(t, tt.rolledOut, st.RolledOut)
			assert.Equal(t, tt.url, st.URL)
			assert.Equal(t, tt.notAvailable, st.NotAvailableMessage)
			assert.Equal(t, tt.rollout, st.RolloutMessage)
		})
	}
}

func TestComponentStatus(t *testing.T) {
	latest := func(rev string, pct int64) v1beta1.TrafficTarget {
		return v1beta1.TrafficTarget{RevisionName: rev, LatestRevision: ptr.To(true), Percent: ptr.To(pct)}
	}
	pinned := func(rev string, pct int64) v1beta1.TrafficTarget {
		return v1beta1.TrafficTarget{RevisionName: rev, LatestRevision: ptr.To(false), Percent: ptr.To(pct)}
	}
	tests := []struct {
		name                 string
		prev                 v1beta1.ComponentStatus
		obs                  workload.State
		wantLatest, wantPrev string
	}{
		{"first rollout", v1beta1.ComponentStatus{}, workload.State{RolledOut: true, LatestReadyRevision: "r1", Traffic: []v1beta1.TrafficTarget{latest("r1", 100)}},
			"r1", ""},
		{"second rollout keeps the first as previous", v1beta1.ComponentStatus{LatestRolledoutRevision: "r1"},
			workload.State{RolledOut: true, LatestReadyRevision: "r2", Traffic: []v1beta1.TrafficTarget{latest("r2", 100)}}, "r2", "r1"},
		{"a canary is not rolled out", v1beta1.ComponentStatus{LatestRolledoutRevision: "r1"},
			workload.State{RolledOut: true, LatestReadyRevision: "r2", Traffic: []v1beta1.TrafficTarget{latest("r2", 10), pinned("r1", 90)}}, "r1", ""},
		{"not ready yet", v1beta1.ComponentStatus{LatestRolledoutRevision: "r1", PreviousRolledoutRevision: "r0"},
			workload.State{LatestReadyRevision: "r1"}, "r1", "r0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := v1beta1.ComponentStatus{URL: "http://plan"}
			Mode{}.ComponentStatus(&cs, tt.prev, tt.obs)
			assert.Equal(t, tt.wantLatest, cs.LatestRolledoutRevision)
			assert.Equal(t, tt.wantPrev, cs.PreviousRolledoutRevision)
			assert.Equal(t, "http://plan", cs.URL, "no Knative URL: the plan's stays")
		})
	}
}
