package childkinds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

func TestRouter(t *testing.T) {
	ingressCfg := func(data map[string]string) *config.Ingress {
		cfg, errs := config.Parse(data)
		require.Empty(t, errs)
		return &cfg.Ingress
	}
	withVS := func(kinds.Kind) bool { return true }
	withoutCRDs := func(k kinds.Kind) bool { return !k.Optional() }
	tests := []struct {
		name         string
		mode         v1beta1.DeploymentMode
		data         map[string]string
		clusterLocal bool
		present      func(kinds.Kind) bool
		want         string
	}{
		{"Standard: Ingress by default", v1beta1.Standard, nil, false, withVS, "Ingress"},
		{"Standard: Gateway API when enabled", v1beta1.Standard, map[string]string{"ingress.enableGatewayApi": "true"}, false, withVS, "Gateway API"},
		{"Standard: cluster-local gets no route", v1beta1.Standard, nil, true, withVS, "none"},
		{"Standard: Istio when asked", v1beta1.Standard, map[string]string{"ingress.enableIstioVirtualService": "true"}, false, withoutCRDs, "Istio"},
		{"Knative: Istio by default when the CRD exists", v1beta1.Knative, nil, false, withVS, "Istio"},
		{"Knative: cluster-local with Istio keeps the local host", v1beta1.Knative, nil, true, withVS, "Istio"},
		{"Knative: its own routes without the CRD", v1beta1.Knative, nil, false, withoutCRDs, "Knative"},
		{"Knative: cluster-local without Istio", v1beta1.Knative, nil, true, withoutCRDs, "none"},
		{"Knative: KServe's disableIstioVirtualHost", v1beta1.Knative, map[string]string{"ingress.disableIstioVirtualHost": "true"}, false, withVS, "Knative"},
		{"Knative: never HTTPRoutes for Knative Services", v1beta1.Knative, map[string]string{"ingress.enableGatewayApi": "true",
			"ingress.enableIstioVirtualService": "false"}, false, withVS, "Knative"},
		{"disabled ingress creation wins", v1beta1.Knative, map[string]string{"ingress.disableIngressCreation": "true"}, false, withVS, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Router(tt.mode, ingressCfg(tt.data), tt.clusterLocal, tt.present).Name())
		})
	}
}

// TestEveryKindHasItsRBACRule: the manager's ClusterRole (generated from the
// markers next to each kind) grants every verb on every registered kind.
func TestEveryKindHasItsRBACRule(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "config/rbac/role.yaml"))
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{}
	require.NoError(t, yaml.Unmarshal(data, role))
	granted := map[string]bool{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted[g+"/"+res+"/"+v] = true
				}
			}
		}
	}
	for _, k := range All() {
		resource := strings.ToLower(k.GVK.Kind) + "s"
		if k.GVK.Kind == "Ingress" {
			resource = "ingresses"
		}
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			assert.True(t, granted[k.GVK.Group+"/"+resource+"/"+verb], "no %s on %s in config/rbac/role.yaml: add the marker next to the kind", verb, k)
		}
	}
}

func TestKindsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All() {
		assert.False(t, seen[k.GVK.String()], "%s twice", k)
		seen[k.GVK.String()] = true
	}
	assert.Len(t, seen, 17, "Deployment, Service, HPA, ScaledObject, OpenTelemetryCollector, Knative Service, Ingress, HTTPRoute, VirtualService, "+
		"InferencePool, RoleBinding, LeaderWorkerSet, ResourceClaimTemplate, PersistentVolume, PersistentVolumeClaim, DaemonSet, Job")
}

// TestOfServices: a service's kinds are All's but the caches', and but the
// LLM's for an InferenceService or a graph.
func TestOfServices(t *testing.T) {
	names := func(ks []kinds.Kind) map[string]bool {
		out := map[string]bool{}
		for _, k := range ks {
			out[k.String()] = true
		}
		return out
	}
	all, llm, isvc := names(All()), names(OfServices(true)), names(OfServices(false))
	assert.True(t, isvc["Deployment.apps"] && isvc["HTTPRoute.gateway.networking.k8s.io"])
	assert.False(t, isvc["InferencePool.inference.networking.k8s.io"], "no LLM kind for an InferenceService")
	assert.True(t, llm["InferencePool.inference.networking.k8s.io"])
	assert.False(t, llm["DaemonSet.apps"], "no cache kind for a service")
	for k := range llm {
		assert.True(t, all[k], k)
	}
}
