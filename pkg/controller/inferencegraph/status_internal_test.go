package inferencegraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
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
