package components

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

func TestWithTag(t *testing.T) {
	for image, want := range map[string]string{
		"kserve/sklearnserver:v0.15.2":           "kserve/sklearnserver:v9",
		"kserve/sklearnserver":                   "kserve/sklearnserver:v9",
		"registry:5000/team/server:1.0":          "registry:5000/team/server:v9",
		"registry:5000/team/server":              "registry:5000/team/server:v9",
		"kserve/sklearnserver@sha256:0123abcdef": "kserve/sklearnserver@sha256:0123abcdef",
	} {
		assert.Equal(t, want, withTag(image, "v9"), image)
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv(
		[]corev1.EnvVar{{Name: "A", Value: "runtime"}, {Name: "B", Value: "runtime"}},
		[]corev1.EnvVar{{Name: "B", Value: "isvc"}, {Name: "C", Value: "isvc"}})
	assert.Equal(t, []corev1.EnvVar{{Name: "A", Value: "runtime"}, {Name: "B", Value: "isvc"}, {Name: "C", Value: "isvc"}}, got)
}

func build(t *testing.T, in Inputs) ([]*Component, error) {
	t.Helper()
	if in.Config == nil {
		in.Config = config.Default()
	}
	return Build(in)
}

func TestBuildErrors(t *testing.T) {
	sklearn := selection(sklearnRuntime(), v1beta1.ProtocolV1)
	tests := []struct {
		name       string
		in         Inputs
		wantReason v1beta1.FailureReason
		wantMsg    string
	}{
		{"unknown storage scheme", Inputs{ISVC: isvcWith("m", modelSpec("sklearn", "ftp://host/m")), Runtime: sklearn},
			v1beta1.UnsupportedStorageURI, `predictor: storageUri scheme "ftp" is not supported`},
		{"storage without storageUri and no Secret", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "")
			s.Predictor.Model.StorageURI, s.Predictor.Model.Storage = nil, &v1beta1.StorageSpec{Path: ptr.To("iris")}
			return s
		}()), Runtime: sklearn, StorageConfig: &StorageConfig{Name: "storage-config"}}, v1beta1.UnsupportedStorageURI,
			"predictor: storage without storageUri reads the Secret storage-config, which does not exist in the namespace; create it or give storageUri"},
		{"storage key missing from the Secret", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "")
			s.Predictor.Model.StorageURI, s.Predictor.Model.Storage = nil, &v1beta1.StorageSpec{Path: ptr.To("iris")}
			return s
		}()), Runtime: sklearn, StorageConfig: &StorageConfig{Name: "storage-config", Data: map[string][]byte{"other": []byte("{}")}}},
			v1beta1.UnsupportedStorageURI, `predictor: the storage-config Secret storage-config has no key "default"`},
		{"a placeholder that does not render", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "gs://b/m")
			s.Predictor.Model.Args = []string{"--x={{.Name.First}}"}
			return s
		}()), Runtime: sklearn}, v1beta1.InvalidPredictorSpec,
			`predictor: container kserve-container args[3]: placeholder in "--x={{.Name.First}}" does not render`},
		{"a placeholder with a function Serval does not run", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "gs://b/m")
			s.Predictor.Model.Args = []string{"--x={{ .Name | js }}"}
			return s
		}()), Runtime: sklearn}, v1beta1.InvalidPredictorSpec,
			`predictor: container kserve-container args[3]: placeholder in "--x={{ .Name | js }}" does not parse (template: :1: function "js" not defined)`},
		{"a template bomb stored past admission", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "gs://b/m")
			s.Predictor.Model.Env = []corev1.EnvVar{{Name: "X", Value: "{{ range 20000000 }}aaaaaaaaaa{{ end }}"}}
			return s
		}()), Runtime: sklearn}, v1beta1.InvalidPredictorSpec,
			`predictor: container kserve-container env X: placeholder in "{{ range 20000000 }}aaaaaaaaaa{{ end }}": template: :1:20: the output passes the bound of 65536 (serval-config templates.maxOutputBytes)`},
		{"reserved volume name", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "gs://b/m")
			s.Predictor.Volumes = []corev1.Volume{{Name: "kserve-provision-location"}}
			return s
		}()), Runtime: sklearn}, v1beta1.InvalidPredictorSpec, "volume name kserve-provision-location is reserved"},
		{"model without a runtime", Inputs{ISVC: isvcWith("m", modelSpec("sklearn", "gs://b/m"))},
			v1beta1.InvalidPredictorSpec, "the selected runtime has no containers"},
		{"an image volume the cluster cannot mount", Inputs{ISVC: isvcWith("m", modelSpec("sklearn", "oci+native://r.example.com/m:1")), Runtime: sklearn,
			ImageVolumes: ImageVolumes{Why: "Kubernetes v1.30.2 has no image volumes (they came in 1.31, behind the ImageVolume feature gate, GA in 1.36)"}},
			v1beta1.UnsupportedStorageURI, "predictor: oci+native://r.example.com/m:1 asks for an image volume, which this cluster cannot mount: " +
				"Kubernetes v1.30.2 has no image volumes (they came in 1.31, behind the ImageVolume feature gate, GA in 1.36); use oci:// (a modelcar) or oci+fetch:// instead"},
		{"storageUris that share no parent", Inputs{ISVC: isvcWith("m", func() v1beta1.InferenceServiceSpec {
			s := modelSpec("sklearn", "")
			s.Predictor.Model.StorageURI = nil
			s.Predictor.StorageURIs = []v1beta1.StorageURISpec{{URI: "gs://b/a", MountPath: "/models/a"}, {URI: "gs://b/b", MountPath: "/data/b"}}
			return s
		}()), Runtime: sklearn}, v1beta1.UnsupportedStorageURI, "the mount paths /models/a, /data/b share no parent directory but /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := build(t, tt.in)
			var be *BuildError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tt.wantReason, be.Reason)
			assert.Contains(t, be.Error(), tt.wantMsg)
		})
	}
}

// TestMissingPlaceholderKeysRenderAsKServe: a label or annotation the
// InferenceService lacks renders as KServe renders it with text/template's
// defaults, "<no value>", rather than failing the predictor.
func TestMissingPlaceholderKeysRenderAsKServe(t *testing.T) {
	s := modelSpec("sklearn", "gs://b/m")
	s.Predictor.Model.Args = []string{"--model_envelope={{.Labels.serviceEnvelope}}", "--name={{.Name}}"}
	s.Predictor.Model.Env = []corev1.EnvVar{{Name: "X", Value: "{{.Annotations.absent}}"}}
	comps, err := build(t, Inputs{ISVC: isvcWith("m", s), Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)})
	require.NoError(t, err)
	c := comps[0].Pod.Containers[0]
	assert.Contains(t, c.Args, "--model_envelope=<no value>")
	assert.Contains(t, c.Args, "--name=m")
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "X", Value: "<no value>"})
}

func TestMetadataPrecedence(t *testing.T) {
	spec := modelSpec("sklearn", "gs://b/m")
	spec.Predictor.Labels = map[string]string{"team": "component", "serving.serval.dev/component": "hijack"}
	spec.Predictor.Annotations = map[string]string{"prometheus.io/scrape": "false"}
	isvc := isvcWith("m", spec, func(i *v1beta1.InferenceService) {
		i.Labels["runtime-label"] = "isvc"
		i.Labels["serving.serval.dev/inferenceservice"] = "hijack"
		i.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "isvc"}
	})
	comps, err := build(t, Inputs{ISVC: isvc, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)})
	require.NoError(t, err)
	c := comps[0]
	assert.Equal(t, "component", c.Labels["team"], "component beats InferenceService and runtime")
	assert.Equal(t, "isvc", c.Labels["runtime-label"], "InferenceService beats runtime")
	assert.Equal(t, "m", c.Labels["serving.serval.dev/inferenceservice"], "Serval's labels cannot be overridden")
	assert.Equal(t, "predictor", c.Labels["serving.serval.dev/component"], "Serval's labels cannot be overridden")
	assert.Equal(t, "false", c.Annotations["prometheus.io/scrape"])
	assert.Equal(t, "isvc", c.Annotations["note"])
	assert.NotContains(t, c.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
}

func TestServerMerge(t *testing.T) {
	spec := modelSpec("sklearn", "gs://b/m")
	m := spec.Predictor.Model
	m.Image = "me/sklearn:custom"
	m.Args = []string{"--extra"}
	m.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	m.Ports = []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9000}, {Name: "http", ContainerPort: 8081}}
	spec.Predictor.Containers = []corev1.Container{
		{Name: "kserve-container", Env: []corev1.EnvVar{{Name: "FROM_CONTAINERS", Value: "1"}}},
		{Name: "sidecar", Image: "side:1"},
	}
	comps, err := build(t, Inputs{ISVC: isvcWith("m", spec), Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)})
	require.NoError(t, err)
	c := comps[0]
	require.Len(t, c.Pod.Containers, 2)
	server := c.Pod.Containers[0]
	assert.Equal(t, "me/sklearn:custom", server.Image, "the InferenceService's image wins")
	assert.Equal(t, []string{"--model_name=m", "--model_dir=/mnt/models", "--http_port=8080", "--extra"}, server.Args, "args appended")
	assert.Equal(t, "4", server.Resources.Limits.Cpu().String(), "the InferenceService's resources win whole")
	assert.Empty(t, server.Resources.Requests)
	assert.Equal(t, []corev1.EnvVar{{Name: "FROM_CONTAINERS", Value: "1"}}, server.Env, "a same-named container overrides the server")
	assert.Equal(t, "sidecar", c.Pod.Containers[1].Name)
	assert.Equal(t, int32(8081), c.ServingPort(), "the first non-gRPC port serves HTTP")
	assert.True(t, c.Ports[0].GRPC)
}

func TestDefaultResourcesWhenNoneSet(t *testing.T) {
	rt := sklearnRuntime()
	rt.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	cfg := config.Default()
	comps, err := build(t, Inputs{ISVC: isvcWith("m", modelSpec("sklearn", "gs://b/m")), Config: cfg, Runtime: selection(rt, v1beta1.ProtocolV1)})
	require.NoError(t, err)
	assert.Equal(t, cfg.DefaultResources, comps[0].Pod.Containers[0].Resources)
}

func TestLegacyKeyIsDefaultedInMemory(t *testing.T) {
	isvc := isvcWith("legacy", v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{
		SKLearn: &v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://b/m")}}})
	req := RuntimeRequest(func() *v1beta1.InferenceService { d := isvc.DeepCopy(); v1beta1.Default(d); return d }())
	require.NotNil(t, req)
	assert.Equal(t, "sklearn", req.ModelFormat.Name)
	comps, err := build(t, Inputs{ISVC: isvc, Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)})
	require.NoError(t, err)
	assert.Equal(t, "gs://b/m", comps[0].Pod.InitContainers[0].Args[0])
	assert.NotNil(t, isvc.Spec.Predictor.SKLearn, "the InferenceService itself is not modified")
}

func TestTransformerKeepsUserArgs(t *testing.T) {
	spec := modelSpec("sklearn", "gs://b/m")
	spec.Transformer = &v1beta1.TransformerSpec{PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{
		Name: "t", Image: "t:1", Args: []string{"--predictor_host=elsewhere:80", "--http_port", "9000"}}}}}
	comps, err := build(t, Inputs{ISVC: isvcWith("m", spec), Runtime: selection(sklearnRuntime(), v1beta1.ProtocolV1)})
	require.NoError(t, err)
	assert.Equal(t, []string{"--predictor_host=elsewhere:80", "--http_port", "9000", "--model_name", "m"}, comps[1].Pod.Containers[0].Args)
}

// TestRuntimeSidecarMerge: a predictor container named like one of the
// runtime's other containers is merged over it, as KServe merges every
// runtime container by name, not added beside it (the API server refuses
// two containers of one name).
func TestRuntimeSidecarMerge(t *testing.T) {
	rt := sklearnRuntime()
	rt.Spec.Containers = append(rt.Spec.Containers, corev1.Container{Name: "transformer-container", Image: "runtime/transformer:1",
		Env: []corev1.EnvVar{{Name: "FROM_RUNTIME", Value: "1"}}})
	spec := modelSpec("sklearn", "gs://b/m")
	spec.Predictor.Containers = []corev1.Container{
		{Name: "transformer-container", Env: []corev1.EnvVar{{Name: "FROM_PREDICTOR", Value: "1"}}},
		{Name: "logger", Image: "log:1"},
	}
	comps, err := build(t, Inputs{ISVC: isvcWith("m", spec), Runtime: selection(rt, v1beta1.ProtocolV1)})
	require.NoError(t, err)
	var names []string
	for _, c := range comps[0].Pod.Containers {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"kserve-container", "transformer-container", "logger"}, names, "each name once")
	sidecar := comps[0].Pod.Containers[1]
	assert.Equal(t, "runtime/transformer:1", sidecar.Image, "the runtime's image where the predictor names none")
	assert.Equal(t, []corev1.EnvVar{{Name: "FROM_RUNTIME", Value: "1"}, {Name: "FROM_PREDICTOR", Value: "1"}}, sidecar.Env,
		"the environments merged by name, as the server's are")
}
