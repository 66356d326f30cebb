package ingress_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/istio"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// canaryPlan is the plan of iris with two canaries: v2 ready at 20%, v3
// not ready yet at 10% (so without traffic).
func canaryPlan(t *testing.T, i *v1beta1.InferenceService, data map[string]string) *ingress.Plan {
	t.Helper()
	p := plan(t, i, cfgWith(t, data))
	p.Canary = true
	split := func(name string, percent int32, ready bool) *components.Component {
		return &components.Component{PodSet: components.PodSet{Name: v1beta1.PredictorChildName(i.Name, name)}, Type: v1beta1.PredictorComponent, Owner: owner.Of(i),
			Split: &components.Split{Canary: name, Percent: percent, Ready: ready}}
	}
	p.SplitPredictor([]*components.Component{split("v2", 20, true), split("v3", 10, false)})
	return p
}

func TestCanaryRoutesGolden(t *testing.T) {
	gateway := map[string]string{"ingress.enableGatewayApi": "true", "ingress.gateway": "gateways/public"}
	p := canaryPlan(t, isvc("iris", false, nil), gateway)
	require.Len(t, p.Top.Splits, 1, "only the ready canary takes traffic")
	assert.Equal(t, int32(80), p.Top.Remainder())
	golden.Check(t, "httproute-canary", render(t, gatewayapi.Router{}, p))
	golden.Check(t, "virtualservice-canary", render(t, istio.Router{}, canaryPlan(t, isvc("iris", false, nil), nil)))

	// With a transformer, the top-level route leads to it; the transformer
	// calls the stable predictor, as in KServe.
	pt := canaryPlan(t, isvc("iris", true, nil), gateway)
	assert.Empty(t, pt.Top.Splits)
	golden.Check(t, "httproute-canary-transformer", render(t, gatewayapi.Router{}, pt))
}

func TestKubernetesIngressRefusesCanaries(t *testing.T) {
	p := plan(t, isvc("iris", false, nil), cfgWith(t, nil))
	assert.Nil(t, kubeingress.Router{}.Refuse(p))
	p.Canary = true
	r := kubeingress.Router{}.Refuse(p)
	require.NotNil(t, r)
	assert.Equal(t, v1beta1.ReasonCanaryNotRoutable, r.Reason)
	assert.Contains(t, r.Message, "route with Gateway API (serval-config ingress.enableGatewayApi: true) or Istio")
	assert.Nil(t, gatewayapi.Router{}.Refuse(p))
	assert.Nil(t, istio.Router{}.Refuse(p))
}
