package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// TestGate: a producer's objects pass when their kinds exist; the objects
// of an optional kind whose CRD is absent are left out, and the first such
// kind is named, without the producer listing its kinds.
func TestGate(t *testing.T) {
	obj := func(k kinds.Kind, name string) apply.Object {
		return apply.Object{GVK: k.GVK, Key: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	deployment, service := obj(standard.DeploymentKind, "d"), obj(standard.ServiceKind, "s")
	scaled, pool, route := obj(standard.ScaledObjectKind, "so"), obj(llmobjects.InferencePoolKind, "pool"), obj(gatewayapi.HTTPRouteKind, "r")
	absent := func(crds ...string) func(kinds.Kind) bool {
		return func(k kinds.Kind) bool {
			for _, c := range crds {
				if k.CRD == c {
					return false
				}
			}
			return true
		}
	}
	cases := []struct {
		name    string
		objs    []apply.Object
		present func(kinds.Kind) bool
		kept    []apply.Object
		missing string
	}{
		{"all there", []apply.Object{deployment, scaled, service}, absent(), []apply.Object{deployment, scaled, service}, ""},
		{"no KEDA", []apply.Object{deployment, scaled, service}, absent(standard.ScaledObjectKind.CRD),
			[]apply.Object{deployment, service}, standard.ScaledObjectKind.CRD},
		{"no Gateway API, nothing of it asked", []apply.Object{deployment, service}, absent(gatewayapi.HTTPRouteKind.CRD),
			[]apply.Object{deployment, service}, ""},
		{"two absent: both left out, the first in the registry's order named", []apply.Object{pool, route, service},
			absent(llmobjects.InferencePoolKind.CRD, gatewayapi.HTTPRouteKind.CRD), []apply.Object{service}, "first"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept, missing := gate(tc.objs, childkinds.All(), tc.present)
			assert.Equal(t, tc.kept, kept)
			switch tc.missing {
			case "":
				assert.Nil(t, missing)
			case "first":
				if assert.NotNil(t, missing) {
					assert.Contains(t, []string{llmobjects.InferencePoolKind.CRD, gatewayapi.HTTPRouteKind.CRD}, missing.CRD)
				}
			default:
				if assert.NotNil(t, missing) {
					assert.Equal(t, tc.missing, missing.CRD)
				}
			}
		})
	}
}
