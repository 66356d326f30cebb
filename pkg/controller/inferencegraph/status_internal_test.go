package inferencegraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// TestEveryConditionHasAReason: a reconcile that stopped before it read
// the route (a failed prune, say) still writes a status the API server
// takes: every condition has a reason.
func TestEveryConditionHasAReason(t *testing.T) {
	ig := &v1alpha1.InferenceGraph{}
	for name, s := range map[string]*scope{
		"nothing observed":         {ig: ig, orig: ig},
		"route chosen, not read":   {ig: ig, orig: ig, out: pipeline.Outcome{Router: kubeingress.Router{}}, plan: &ingress.Plan{}},
		"route kind missing":       {ig: ig, orig: ig, out: pipeline.Outcome{MissingRouteKind: &gatewayapi.HTTPRouteKind}, plan: &ingress.Plan{}},
		"waiting for an address":   {ig: ig, orig: ig, waiting: true, notReady: []string{"a (not found)"}},
		"a failure of the ingress": {ig: ig, orig: ig, failure: &pipeline.Failure{Reason: v1beta1.ReasonInvalidHost}},
	} {
		t.Run(name, func(t *testing.T) {
			st := computeStatus(s)
			for _, typ := range []string{v1beta1.ConditionReady, v1alpha1.GraphRouterReady, v1alpha1.GraphServicesReady, v1alpha1.GraphIngressReady} {
				c := meta.FindStatusCondition(st.Conditions, typ)
				if assert.NotNil(t, c, typ) {
					assert.NotEmpty(t, c.Reason, typ)
				}
			}
		})
	}
}

// TestRouteKindMissing: without Gateway API, the router still runs and
// IngressReady names the CRD to install.
func TestRouteKindMissing(t *testing.T) {
	ig := &v1alpha1.InferenceGraph{}
	s := &scope{ig: ig, orig: ig, plan: &ingress.Plan{}, out: pipeline.Outcome{MissingRouteKind: &gatewayapi.HTTPRouteKind,
		Observed: map[v1beta1.ComponentType]workload.State{RouterComponent: {Available: true}}}}
	st := computeStatus(s)
	ing := meta.FindStatusCondition(st.Conditions, v1alpha1.GraphIngressReady)
	assert.Equal(t, metav1.ConditionFalse, ing.Status)
	assert.Equal(t, v1beta1.ReasonMissingCRD, ing.Reason)
	assert.Contains(t, ing.Message, "the CRD httproutes.gateway.networking.k8s.io is not installed, and the route needs a HTTPRoute")
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(st.Conditions, v1alpha1.GraphRouterReady).Status, "the router runs")
	assert.Equal(t, v1beta1.ReasonMissingCRD, meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady).Reason)
}
