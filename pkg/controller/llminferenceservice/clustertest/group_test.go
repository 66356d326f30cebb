package clustertest

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice"
)

// groupMember creates a member of the routing group chat and makes it
// Ready: its model pods available, its route accepted.
func groupMember(t *testing.T, ns, name, model string, weight int) {
	t.Helper()
	createService(t, ns, name, `
  model: {uri: hf://facebook/opt-125m, name: `+model+`}
  router:
    gateway: {refs: [{name: inference-gateway}]}
    route: {group: chat, weight: `+strconv.Itoa(weight)+`}
`)
	makeAvailable(t, ns, name+"-kserve")
	eventually(t, "the route of "+name, func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, name+"-kserve-route") })
	acceptRoute(t, ns, name+"-kserve-route")
	eventually(t, name+" Ready", func() bool { return condition(t, ns, name, "Ready") == "True/Ready" })
}

// sharedBackends are the weighted backends of a route's rule that every
// member shares (the first not under /{namespace}/{name}).
func sharedBackends(t *testing.T, ns, name string) map[string]int32 {
	t.Helper()
	route := &gatewayv1.HTTPRoute{}
	require.True(t, exists(route, ns, name+"-kserve-route"))
	out := map[string]int32{}
	for _, rule := range route.Spec.Rules {
		if slices.ContainsFunc(rule.Matches, func(m gatewayv1.HTTPRouteMatch) bool {
			return m.Path != nil && m.Path.Value != nil && *m.Path.Value == "/v1/completions"
		}) {
			for _, b := range rule.BackendRefs {
				out[string(b.Name)] = *b.Weight
			}
		}
	}
	return out
}

// TestRoutingGroupSplitsTraffic: members of a group share their routes'
// traffic by weight once each takes traffic; a member serving another model
// is left out and named in GroupDegraded; a deleted member stays until the
// others' routes have left it.
func TestRoutingGroupSplitsTraffic(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createGateway(t, ns, "inference-gateway", "10.0.0.10")
	groupMember(t, ns, "a", "opt", 70)
	groupMember(t, ns, "b", "opt", 30)
	both := map[string]int32{"a-kserve-workload-svc": 70, "b-kserve-workload-svc": 30}
	for _, name := range []string{"a", "b"} {
		eventually(t, name+"'s route split", func() bool { return assert.ObjectsAreEqual(both, sharedBackends(t, ns, name)) })
		assert.Equal(t, "True/GroupReady", condition(t, ns, name, "GroupReady"))
		assert.Equal(t, "", condition(t, ns, name, "GroupDegraded"))
		assert.Contains(t, get(t, ns, name).Finalizers, llminferenceservice.GroupFinalizer)
	}
	g := get(t, ns, "a").Status.Router.Group
	require.NotNil(t, g)
	assert.Equal(t, "chat", g.Name)
	require.Len(t, g.Members, 2)
	assert.Equal(t, "b", g.Members[1].Name)
	assert.Equal(t, int32(30), g.Members[1].Weight)
	assert.Equal(t, "b-kserve-workload-svc", string(g.Members[1].BackendRef.Name))

	groupMember(t, ns, "c", "other", 10)
	eventually(t, "a degraded", func() bool { return condition(t, ns, "a", "GroupDegraded") == "True/MemberDivergence" })
	assert.Contains(t, message(t, ns, "a", "GroupDegraded"), "c (weight 10, models other)")
	assert.Equal(t, both, sharedBackends(t, ns, "a"), "a member serving another model gets none of the traffic")

	require.NoError(t, k8s.Delete(ctx, get(t, ns, "b")))
	eventually(t, "b gone", func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "b"}, &v1alpha2.LLMInferenceService{}))
	})
	assert.Equal(t, map[string]int32{"a-kserve-workload-svc": 70}, sharedBackends(t, ns, "a"),
		"the route of a had left b before b went")
}

// TestStopAndResume: the stop annotation removes a service's workloads and
// route and says so in every condition; in a routing group, the stopped
// member is listed as stopped and gets no traffic; removing the
// annotation brings everything back.
func TestStopAndResume(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createGateway(t, ns, "inference-gateway", "10.0.0.10")
	groupMember(t, ns, "a", "opt", 50)
	groupMember(t, ns, "b", "opt", 50)
	eventually(t, "the traffic split", func() bool { return len(sharedBackends(t, ns, "a")) == 2 })

	setStop := func(on bool) {
		require.NoError(t, retryOnConflict(func() error {
			s := get(t, ns, "b")
			if on {
				s.Annotations = map[string]string{v1alpha2.StopAnnotation: "true"}
			} else {
				delete(s.Annotations, v1alpha2.StopAnnotation)
			}
			return k8s.Update(ctx, s)
		}))
	}
	setStop(true)
	eventually(t, "b stopped", func() bool {
		return condition(t, ns, "b", "Ready") == "False/Stopped" && !exists(&appsv1.Deployment{}, ns, "b-kserve") &&
			!exists(&gatewayv1.HTTPRoute{}, ns, "b-kserve-route") && !exists(&corev1.Service{}, ns, "b-kserve-workload-svc")
	})
	for _, c := range []string{"MainWorkloadReady", "WorkloadsReady", "HTTPRoutesReady", "GatewaysReady", "RouterReady"} {
		assert.Equal(t, "False/Stopped", condition(t, ns, "b", c), c)
	}
	assert.Empty(t, get(t, ns, "b").Status.URL)
	eventually(t, "a's route leaves b", func() bool {
		return assert.ObjectsAreEqual(map[string]int32{"a-kserve-workload-svc": 50}, sharedBackends(t, ns, "a"))
	})
	g := get(t, ns, "a").Status.Router.Group
	require.Len(t, g.Members, 2)
	assert.True(t, g.Members[1].Stopped, "b is listed, stopped")

	setStop(false)
	eventually(t, "b's children back", func() bool { return exists(&appsv1.Deployment{}, ns, "b-kserve") })
	makeAvailable(t, ns, "b-kserve")
	eventually(t, "the route of b", func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, "b-kserve-route") })
	acceptRoute(t, ns, "b-kserve-route")
	eventually(t, "b Ready again", func() bool { return condition(t, ns, "b", "Ready") == "True/Ready" })
	eventually(t, "the traffic split again", func() bool { return len(sharedBackends(t, ns, "a")) == 2 })
}
