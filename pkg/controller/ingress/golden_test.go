package ingress_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/istio"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

func isvc(name string, transformer bool, labels map[string]string) *v1beta1.InferenceService {
	i := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "models", UID: "uid-1", Labels: labels}}
	i.Spec.Predictor.Containers = []corev1.Container{{Name: "kserve-container", Image: "example.com/model:1"}}
	i.Spec.Predictor.TimeoutSeconds = ptr.To[int64](30)
	if transformer {
		i.Spec.Transformer = &v1beta1.TransformerSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{Name: "t", Image: "example.com/t:1"}}}}
	}
	return i
}

func withExplainer(i *v1beta1.InferenceService) *v1beta1.InferenceService {
	i.Spec.Explainer = &v1beta1.ExplainerSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{Name: "e", Image: "example.com/e:1"}}}}
	return i
}

func cfgWith(t *testing.T, data map[string]string) *config.Config {
	t.Helper()
	cfg, errs := config.Parse(data)
	require.Empty(t, errs)
	return cfg
}

func plan(t *testing.T, i *v1beta1.InferenceService, cfg *config.Config) *ingress.Plan {
	t.Helper()
	comps, err := components.Build(components.Inputs{ISVC: i, Config: cfg})
	require.NoError(t, err)
	p, err := ingress.MakePlan(owner.Of(i), config.Meta{Labels: i.Labels, Annotations: i.Annotations}, v1beta1.IsClusterLocal(i), comps, &cfg.Ingress)
	require.NoError(t, err)
	return p
}

func render(t *testing.T, b ingress.Router, p *ingress.Plan) []byte {
	t.Helper()
	objs, err := b.Objects(p)
	require.NoError(t, err)
	return golden.Objects(t, objs)
}

func TestGolden(t *testing.T) {
	gateway := map[string]string{"ingress.enableGatewayApi": "true", "ingress.gateway": "gateways/public", "ingress.gatewaySectionName": "https"}
	with := func(base map[string]string, extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	domain := map[string]string{"ingress.ingressDomain": "ml.example.org", "ingress.domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "ingress.urlScheme": "https"}
	path := map[string]string{"ingress.pathTemplate": "/serving/{{ .Namespace }}/{{ .Name }}"}
	cases := []struct {
		name       string
		isvc       *v1beta1.InferenceService
		data       map[string]string
		wantTopURL string
	}{
		{"predictor", isvc("iris", false, nil), nil, "http://iris-models.example.com"},
		{"transformer-predictor", isvc("iris", true, nil), nil, "http://iris-models.example.com"},
		{"domain-template", isvc("iris", false, nil), domain, "https://iris.models.ml.example.org"},
		{"path-template", isvc("iris", false, nil), path, "http://example.com/serving/models/iris"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ingressCfg := cfgWith(t, tc.data)
			p := plan(t, tc.isvc, ingressCfg)
			assert.Equal(t, tc.wantTopURL, p.Top.URL)
			golden.Check(t, "ingress-"+tc.name, render(t, kubeingress.Router{}, p))
			gatewayCfg := cfgWith(t, with(gateway, tc.data))
			golden.Check(t, "httproute-"+tc.name, render(t, gatewayapi.Router{}, plan(t, tc.isvc, gatewayCfg)))
		})
	}
}

// TestVirtualServiceGolden renders the Istio router's objects: through the
// local gateway in Knative mode, straight to the Services in Standard mode.
func TestVirtualServiceGolden(t *testing.T) {
	local := map[string]string{v1beta1.VisibilityLabel: v1beta1.VisibilityClusterLocal}
	cases := []struct {
		name            string
		isvc            *v1beta1.InferenceService
		data            map[string]string
		viaLocalGateway bool
		wantURL         string
		wantAddress     string
	}{
		{"predictor", isvc("iris", false, nil), nil, true, "http://iris-models.example.com", "http://iris.models.svc.cluster.local"},
		{"transformer-explainer", withExplainer(isvc("iris", true, nil)), nil, true, "http://iris-models.example.com", "http://iris.models.svc.cluster.local"},
		{"cluster-local", isvc("iris", true, local), nil, true, "http://iris.models.svc.cluster.local", "http://iris.models.svc.cluster.local"},
		{"standard", withExplainer(isvc("iris", true, nil)), nil, false, "http://iris-models.example.com", "http://iris.models.svc.cluster.local"},
		{"path-template", isvc("iris", false, nil), map[string]string{"ingress.pathTemplate": "/serving/{{ .Namespace }}/{{ .Name }}",
			"ingress.ingressGateway": "istio-system/public", "ingress.localGateway": "istio-system/mesh-local",
			"ingress.localGatewayService": "mesh-local.istio-system.svc.cluster.local"}, true,
			"http://example.com/serving/models/iris", "http://iris.models.svc.cluster.local"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, tc.isvc, cfgWith(t, tc.data))
			golden.Check(t, "virtualservice-"+tc.name, render(t, istio.Router{ViaLocalGateway: tc.viaLocalGateway}, p))
			r := istio.Readiness(p)
			assert.Equal(t, tc.wantURL, r.URL)
			assert.Equal(t, tc.wantAddress, r.ClusterURL)
		})
	}
}

func TestClusterLocalPlan(t *testing.T) {
	cfg := cfgWith(t, nil)
	p := plan(t, isvc("iris", true, map[string]string{v1beta1.VisibilityLabel: v1beta1.VisibilityClusterLocal}), cfg)
	assert.False(t, p.External)
	assert.Equal(t, "http://iris-transformer.models.svc.cluster.local", p.Top.URL, "the transformer's cluster-local address")
	for _, r := range p.Components {
		assert.Equal(t, r.ClusterURL, r.URL)
	}
	disabled := cfgWith(t, map[string]string{"ingress.disableIngressCreation": "true"})
	assert.False(t, plan(t, isvc("iris", false, nil), disabled).External)
}

// TestTemplatesReadLabelsAndAnnotations: the domain and path templates read
// the InferenceService's labels and annotations, as KServe's do; one it
// lacks renders "<no value>", an invalid host named in the error.
func TestTemplatesReadLabelsAndAnnotations(t *testing.T) {
	cfg := cfgWith(t, map[string]string{"ingress.domainTemplate": "{{ .Name }}.{{ .Labels.team }}.{{ .IngressDomain }}",
		"ingress.pathTemplate": "/{{ .Annotations.tenant }}/{{ .Name }}"})
	i := isvc("iris", false, map[string]string{"team": "fraud"})
	i.Annotations = map[string]string{"tenant": "acme"}
	p := plan(t, i, cfg)
	assert.Equal(t, "example.com", p.Top.Host, "with a path template, the top route is on the domain")
	assert.Equal(t, "/acme/iris", p.Top.PathPrefix)
	assert.Equal(t, "iris-predictor.fraud.example.com", p.Components[0].Host)

	bare := isvc("iris", false, nil)
	comps, err := components.Build(components.Inputs{ISVC: bare, Config: cfg})
	require.NoError(t, err)
	_, err = ingress.MakePlan(owner.Of(bare), config.Meta{}, false, comps, &cfg.Ingress)
	var hostErr *ingress.HostError
	require.ErrorAs(t, err, &hostErr)
	assert.Equal(t, `ingress.domainTemplate reads a label or annotation the object does not have (the host renders as "iris-predictor.<no value>.example.com"): add it, or change the template`, err.Error())
}
