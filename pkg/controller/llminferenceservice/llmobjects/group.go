package llmobjects

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
)

// GroupMember is a service of a routing group as the route of each member
// sends it traffic: its weight, its backend and the models it serves.
type GroupMember struct {
	Name    string
	Weight  int32
	Backend gwapiv1.BackendObjectReference
	Models  []string
	// Stopped members (the stop annotation) are listed, and get no traffic.
	Stopped bool
}

// Member is svc as a member of its group. Its backend is the pool it names
// (pool.ref), else the one its status reports, else the one its spec calls
// for, else its workload Service; the port is the model's.
func Member(svc *v1alpha2.LLMInferenceService) GroupMember {
	m := GroupMember{Name: svc.Name, Models: modelNames(svc), Stopped: v1alpha2.IsStopped(svc)}
	if r := svc.Spec.Router; r != nil && r.Route != nil {
		m.Weight = ptr.Deref(r.Route.Weight, 0)
	}
	pool := func(name string) gwapiv1.BackendObjectReference {
		return gwapiv1.BackendObjectReference{Group: ptr.To[gwapiv1.Group]("inference.networking.k8s.io"),
			Kind: ptr.To[gwapiv1.Kind]("InferencePool"), Name: gwapiv1.ObjectName(name), Port: ptr.To(gwapiv1.PortNumber(ModelPort))}
	}
	r := svc.Spec.Router
	switch {
	case r != nil && r.Scheduler != nil && r.Scheduler.Pool.HasRef():
		m.Backend = pool(r.Scheduler.Pool.Ref.Name)
	case svc.Status.Router != nil && svc.Status.Router.Scheduler != nil && svc.Status.Router.Scheduler.InferencePool != nil:
		m.Backend = pool(svc.Status.Router.Scheduler.InferencePool.Name)
	case r != nil && r.Scheduler != nil:
		m.Backend = pool(presets.InferencePoolName(svc.Name))
	default:
		m.Backend = gwapiv1.BackendObjectReference{Group: ptr.To[gwapiv1.Group](""), Kind: ptr.To[gwapiv1.Kind]("Service"),
			Name: gwapiv1.ObjectName(presets.WorkloadServiceName(svc.Name)), Port: ptr.To(gwapiv1.PortNumber(ModelPort))}
	}
	return m
}

// modelNames are the models a service serves: its model's name (the
// service's own when unset) and its adapters', sorted, once each.
func modelNames(svc *v1alpha2.LLMInferenceService) []string {
	names := []string{ptr.Deref(svc.Spec.Model.Name, svc.Name)}
	if l := svc.Spec.Model.LoRA; l != nil {
		for _, a := range l.Adapters {
			if a.Name != nil {
				names = append(names, *a.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Routable reports whether a member other than the reconciled service
// takes traffic: not being deleted, its router ready and its model
// workload available (KServe asks for a ready replica of each workload).
// A stopped member takes none but is still listed (see Listed).
func Routable(svc *v1alpha2.LLMInferenceService) bool {
	return svc.DeletionTimestamp == nil &&
		meta.IsStatusConditionTrue(svc.Status.Conditions, v1alpha2.ConditionRouterReady) &&
		meta.IsStatusConditionTrue(svc.Status.Conditions, v1alpha2.ConditionMainWorkloadReady)
}

// Listed reports whether a member other than the reconciled service is in
// the group's status: routable, or stopped (and not being deleted).
func Listed(svc *v1alpha2.LLMInferenceService) bool {
	return Routable(svc) || (svc.DeletionTimestamp == nil && v1alpha2.IsStopped(svc))
}

// SplitGroup sorts the members (self among them) by name into those that
// serve the same models as self, which share the traffic, and those that
// diverge, which get none.
func SplitGroup(self GroupMember, members []GroupMember) (matching, divergent []GroupMember) {
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b GroupMember) int { return cmp.Compare(a.Name, b.Name) })
	for _, m := range members {
		if slices.Equal(m.Models, self.Models) {
			matching = append(matching, m)
		} else {
			divergent = append(divergent, m)
		}
	}
	return matching, divergent
}

// splitTraffic gives each rule of route that sends to the service's own
// backend (its pool, the pool it names, its workload Service) the group's
// backends, weighted, instead; the rules under /{namespace}/{name}, which
// reach this service alone, keep theirs.
func splitTraffic(route *gwapiv1.HTTPRouteSpec, in Inputs) {
	own := Member(in.Service).Backend.Name
	workload := gwapiv1.ObjectName(presets.WorkloadServiceName(in.Service.Name))
	mine := "/" + in.Service.Namespace + "/" + in.Service.Name
	backends := make([]gwapiv1.HTTPBackendRef, 0, len(in.Group))
	for _, m := range in.Group {
		if m.Stopped {
			continue // a weight of 0 still leaks traffic on some Gateways
		}
		backends = append(backends, gwapiv1.HTTPBackendRef{BackendRef: gwapiv1.BackendRef{BackendObjectReference: m.Backend, Weight: ptr.To(m.Weight)}})
	}
	for i, rule := range route.Rules {
		if reachesOnly(rule, mine) {
			continue
		}
		if slices.ContainsFunc(rule.BackendRefs, func(b gwapiv1.HTTPBackendRef) bool { return b.Name == own || b.Name == workload }) {
			route.Rules[i].BackendRefs = slices.Clone(backends)
		}
	}
}

// reachesOnly reports whether a rule matches paths at or under prefix.
func reachesOnly(rule gwapiv1.HTTPRouteRule, prefix string) bool {
	return slices.ContainsFunc(rule.Matches, func(m gwapiv1.HTTPRouteMatch) bool {
		if m.Path == nil || m.Path.Value == nil {
			return false
		}
		p := *m.Path.Value
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	})
}
