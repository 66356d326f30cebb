package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

func TestParseDefaults(t *testing.T) {
	cfg := Default()
	assert.Equal(t, v1beta1.Standard, cfg.DefaultDeploymentMode)
	assert.Equal(t, "kserve/storage-initializer:v0.15.2", cfg.StorageInitializer.Image)
	assert.Equal(t, "2Gi", cfg.DefaultResources.Limits.Memory().String())
	assert.Equal(t, "100m", cfg.StorageInitializer.Resources.Requests.Cpu().String())
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		check   func(t *testing.T, cfg *Config)
		wantErr []string
	}{
		{name: "legacy mode alias", data: map[string]string{"deploy.defaultDeploymentMode": "Serverless"},
			check: func(t *testing.T, cfg *Config) { assert.Equal(t, v1beta1.Knative, cfg.DefaultDeploymentMode) }},
		{name: "resources override", data: map[string]string{"resources.cpuLimit": "4"},
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, "4", cfg.DefaultResources.Limits.Cpu().String())
				assert.Equal(t, "1", cfg.DefaultResources.Requests.Cpu().String())
			}},
		{name: "bad mode", data: map[string]string{"deploy.defaultDeploymentMode": "ModelMesh"},
			wantErr: []string{`serval-config key deploy.defaultDeploymentMode: "ModelMesh" is not a deployment mode: use Standard or Knative`}},
		{name: "bad quantity", data: map[string]string{"resources.memoryLimit": "lots"},
			wantErr: []string{`serval-config key resources.memoryLimit: "lots" is not a resource quantity`}},
		{name: "empty image", data: map[string]string{"storageInitializer.image": " "},
			wantErr: []string{`serval-config key storageInitializer.image: "" must not be empty`}},
		{name: "router limits", data: map[string]string{"router.maxRequestBodyBytes": "8Mi", "router.readHeaderTimeout": "2s", "router.maxIdleConnsPerStep": "16"},
			check: func(t *testing.T, cfg *Config) {
				assert.Equal(t, int64(8<<20), cfg.Router.Limits.MaxRequestBodyBytes)
				assert.Equal(t, 2*time.Second, cfg.Router.Limits.ReadHeaderTimeout)
				assert.Equal(t, 16, cfg.Router.Limits.MaxIdleConnsPerStep)
				assert.Equal(t, int64(1<<20), cfg.Router.Limits.MaxHeaderBytes, "the default")
			}},
		{name: "bad router limits", data: map[string]string{"router.maxHeaderBytes": "0", "router.readTimeout": "soon", "router.idleTimeout": "0s", "router.stepResponseHeaderTimeout": "-1s"},
			wantErr: []string{
				`serval-config key router.maxHeaderBytes: "0" is not a size in bytes of at least 1 (examples: 1Mi, 64Mi, 1048576)`,
				`serval-config key router.readTimeout: "soon" is not a duration (examples: 500ms, 10s, 2m)`,
				`serval-config key router.idleTimeout: "0s" must be longer than 0`,
				`serval-config key router.stepResponseHeaderTimeout: "-1s" is not a duration`,
			}},
		{name: "unknown key", data: map[string]string{"deploy.defaultDeploymentmode": "Standard"},
			wantErr: []string{`serval-config key deploy.defaultDeploymentmode: "Standard" is not a serval-config key`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, errs := Parse(tt.data)
			if len(tt.wantErr) == 0 {
				require.Empty(t, errs)
				tt.check(t, cfg)
				return
			}
			assert.Nil(t, cfg, "no partial config on error")
			require.Len(t, errs, len(tt.wantErr))
			for i, want := range tt.wantErr {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestDefaultResourcesAreIndependentCopies(t *testing.T) {
	a, b := Default(), Default()
	a.DefaultResources.Limits[corev1.ResourceCPU] = a.DefaultResources.Limits[corev1.ResourceMemory]
	assert.Equal(t, "1", b.DefaultResources.Limits.Cpu().String())
}

func TestParseIngress(t *testing.T) {
	cfg, errs := Parse(map[string]string{
		"ingress.enableGatewayApi": "true", "ingress.gateway": "gw-ns/gw", "ingress.ingressDomain": "models.example.org",
		"ingress.domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "ingress.pathTemplate": "/serving/{{ .Namespace }}/{{ .Name }}",
		"ingress.enableLLMInferenceServiceTLS": "true",
	})
	require.Empty(t, errs)
	assert.True(t, cfg.Ingress.EnableGatewayAPI)
	assert.True(t, cfg.Ingress.EnableLLMTLS)
	assert.False(t, Default().Ingress.EnableLLMTLS, "off unless set, as in KServe")

	labelled, errs := Parse(map[string]string{"ingress.domainTemplate": "{{ .Name }}.{{ .Labels.team }}.{{ index .Annotations \"zone\" }}.{{ .IngressDomain }}"})
	require.Empty(t, errs, "a template may read labels and annotations")
	labelledHost, err := labelled.Ingress.Host("iris", "team", Meta{Labels: map[string]string{"team": "fraud"}, Annotations: map[string]string{"zone": "eu"}})
	require.NoError(t, err)
	assert.Equal(t, "iris.fraud.eu.example.com", labelledHost)
	_, errs = Parse(map[string]string{"ingress.domainTemplate": "{{ .Nmae }}.{{ .IngressDomain }}"})
	assert.NotEmpty(t, errs, "a typo outside the labels and annotations is still refused")
	assert.Equal(t, "gw-ns/gw", cfg.Ingress.Gateway.String())
	host, err := cfg.Ingress.Host("iris-predictor", "team", Meta{})
	require.NoError(t, err)
	assert.Equal(t, "iris-predictor.team.models.example.org", host)
	path, err := cfg.Ingress.Path("iris", "team", Meta{})
	require.NoError(t, err)
	assert.Equal(t, "/serving/team/iris", path)

	def := Default()
	host, _ = def.Ingress.Host("iris", "default", Meta{})
	assert.Equal(t, "iris-default.example.com", host)
	path, _ = def.Ingress.Path("iris", "default", Meta{})
	assert.Empty(t, path)
}

func TestParseIngressErrors(t *testing.T) {
	for key, tt := range map[string]struct{ value, want string }{
		"ingress.enableGatewayApi": {"yes please", "is not a boolean"},
		"ingress.gateway":          {"just-a-name", "must be namespace/name of a Gateway"},
		"ingress.urlScheme":        {"ftp", "must be http or https"},
		"ingress.domainTemplate":   {"{{ .Name", "does not parse"},
		"ingress.pathTemplate":     {"serving/{{ .Name }}", "a path must start with /"},
	} {
		_, errs := Parse(map[string]string{key: tt.value})
		require.Len(t, errs, 1, key)
		assert.Contains(t, errs[0].Error(), tt.want, key)
		assert.Equal(t, key, errs[0].Key)
	}
	_, errs := Parse(map[string]string{"ingress.domainTemplate": "{{ .Name }}_{{ .Cluster }}"})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "does not render")
	_, errs = Parse(map[string]string{"ingress.domainTemplate": "{{ .Name }}_{{ .Namespace }}"})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "not a valid host")
	// text/template's html, js and call are not run (see pkg/strtemplate).
	_, errs = Parse(map[string]string{"ingress.domainTemplate": "{{ .Name | html }}.{{ .IngressDomain }}"})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), `does not parse: template: ingress.domainTemplate:1: function "html" not defined`)
	assert.Equal(t, "ingress.domainTemplate", errs[0].Key)
}

func TestParseIstio(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    IstioMode
		wantErr string
	}{
		{"auto by default", nil, IstioAuto, ""},
		{"on", map[string]string{"ingress.enableIstioVirtualService": "true"}, IstioOn, ""},
		{"off", map[string]string{"ingress.enableIstioVirtualService": "false"}, IstioOff, ""},
		{"KServe's spelling turns it off", map[string]string{"ingress.disableIstioVirtualHost": "true"}, IstioOff, ""},
		{"contradiction", map[string]string{"ingress.enableIstioVirtualService": "true", "ingress.disableIstioVirtualHost": "true"}, "",
			`serval-config key ingress.disableIstioVirtualHost: "true" contradicts ingress.enableIstioVirtualService: true; set only one of them`},
		{"not a boolean", map[string]string{"ingress.enableIstioVirtualService": "yes please"}, "",
			`serval-config key ingress.enableIstioVirtualService: "yes please" is not a boolean`},
		{"a gateway without a namespace", map[string]string{"ingress.localGateway": "knative-local-gateway"}, "",
			`serval-config key ingress.localGateway: "knative-local-gateway" must be namespace/name of an Istio Gateway`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, errs := Parse(tt.data)
			if tt.wantErr != "" {
				require.Len(t, errs, 1)
				assert.Contains(t, errs[0].Error(), tt.wantErr)
				return
			}
			require.Empty(t, errs)
			assert.Equal(t, tt.want, cfg.Ingress.IstioVirtualService)
			assert.Equal(t, "knative-serving/knative-local-gateway", cfg.Ingress.LocalGateway.String())
		})
	}
}

func TestHostAndPathProblems(t *testing.T) {
	long := strings.Repeat("a", 64)
	assert.Empty(t, HostProblems("model-default.example.com"))
	assert.Equal(t, []string{`the first label "` + long + `" is 64 characters, over the 63 a DNS label allows`}, HostProblems(long+".example.com"))
	assert.Equal(t, []string{`the label "` + long + `" is 64 characters, over the 63 a DNS label allows`}, HostProblems("model."+long+".example.com"),
		"a template may put the namespace in any label")
	assert.NotEmpty(t, HostProblems(strings.Repeat("a.", 130)+"com"), "over 253 characters")

	assert.Empty(t, PathProblems("/serving/default/model"))
	assert.Equal(t, []string{"it does not start with /"}, PathProblems("serving/model"))
	assert.Equal(t, []string{"it holds whitespace or a control character"}, PathProblems("/serving/a b"))
	assert.Equal(t, []string{"it is 1025 characters, over the 1024 a route's path allows"}, PathProblems("/"+strings.Repeat("p", 1024)))
}
