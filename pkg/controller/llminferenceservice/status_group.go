package llminferenceservice

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// ReasonMemberDivergence is GroupDegraded's reason: members of the group
// serve other models than this service, and get none of its traffic.
const ReasonMemberDivergence = "MemberDivergence"

// groupConditions are GroupReady and GroupDegraded, KServe's: set in a
// routing group, removed outside one.
func groupConditions(s *scope, set func(string, cond), remove func(...string)) {
	if s.group == nil {
		remove(v1alpha2.ConditionGroupReady, v1alpha2.ConditionGroupDegraded)
		return
	}
	set(v1alpha2.ConditionGroupReady, cond{ok: true, reason: "GroupReady", message: "the route splits traffic across " + memberList(s.group)})
	if len(s.divergent) == 0 {
		remove(v1alpha2.ConditionGroupDegraded)
		return
	}
	set(v1alpha2.ConditionGroupDegraded, cond{ok: true, reason: ReasonMemberDivergence, message: fmt.Sprintf(
		"group has members with different model sets, which get none of this route's traffic: %s", memberList(s.divergent))})
}

// groupStatus is status.router.group: the members that share the traffic.
func groupStatus(s *scope) *v1alpha2.GroupStatus {
	if s.group == nil {
		return nil
	}
	g := &v1alpha2.GroupStatus{Name: s.svc.Spec.Router.RoutingGroup()}
	for _, m := range s.group {
		backend := m.Backend
		g.Members = append(g.Members, v1alpha2.GroupMemberStatus{Name: m.Name, Weight: m.Weight, Stopped: m.Stopped, BackendRef: &backend})
	}
	return g
}

// memberList names members with their weights, or their models when they
// serve other ones.
func memberList(members []llmobjects.GroupMember) string {
	parts := make([]string, 0, len(members))
	for _, m := range members {
		parts = append(parts, fmt.Sprintf("%s (weight %d, models %s)", m.Name, m.Weight, strings.Join(m.Models, "+")))
	}
	return strings.Join(parts, ", ")
}

// recordDivergence sends a Warning Event when the group starts to diverge.
func (r *Reconciler) recordDivergence(s *scope, st *v1alpha2.LLMInferenceServiceStatus) {
	if meta.IsStatusConditionTrue(st.Conditions, v1alpha2.ConditionGroupDegraded) &&
		!meta.IsStatusConditionTrue(s.orig.Status.Conditions, v1alpha2.ConditionGroupDegraded) {
		r.Recorder.Eventf(s.svc, nil, corev1.EventTypeWarning, ReasonMemberDivergence, "Route",
			"routing group %q has members with different model sets: %s", s.svc.Spec.Router.RoutingGroup(), memberList(s.divergent))
	}
}
