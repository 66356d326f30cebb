package serving_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true},
		func(e *testenv.Environment) { env = e })
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(root, rel)
}

// readObjects decodes every YAML document of a file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// TestCRDSizeBudget keeps each CRD's compact JSON, which client-side
// `kubectl apply` stores in an annotation limited to 256 KiB, under 200 KiB.
func TestCRDSizeBudget(t *testing.T) {
	files, err := filepath.Glob(repoPath(t, "config/crd/bases/*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 11)
	for _, f := range files {
		for _, obj := range readObjects(t, f) {
			compact, err := json.Marshal(obj.Object)
			require.NoError(t, err)
			t.Logf("%s: %d bytes of compact JSON", obj.GetName(), len(compact))
			assert.Less(t, len(compact), 200*1024, "%s is over the 200 KiB budget", obj.GetName())
		}
	}
}

// TestKubectlClientSideApply applies the CRDs the way users do without
// --server-side: it fails if a CRD is too large for the last-applied annotation.
func TestKubectlClientSideApply(t *testing.T) {
	bin, err := testenv.BinDir()
	require.NoError(t, err)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, env.KubeConfig, 0o600))
	out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "-f", repoPath(t, "config/crd/bases")).CombinedOutput()
	require.NoError(t, err, "kubectl apply: %s", out)
	assert.Contains(t, string(out), "inferenceservices.serving.serval.dev")
}

// TestSamplesAccepted creates every sample with a server-side dry run.
func TestSamplesAccepted(t *testing.T) {
	files, err := filepath.Glob(repoPath(t, "config/samples/*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		for _, obj := range readObjects(t, f) {
			t.Run(filepath.Base(f)+"/"+obj.GetName(), func(t *testing.T) {
				namespaced, err := env.Client.IsObjectNamespaced(obj)
				require.NoError(t, err)
				if namespaced && obj.GetNamespace() == "" {
					obj.SetNamespace("default")
				}
				require.NoError(t, env.Client.Create(context.Background(), obj, client.DryRunAll))
			})
		}
	}
}

// TestSchemaRejectsBadManifests checks the CRD schema's own answers, which
// hold even where the admission webhook is not installed.
func TestSchemaRejectsBadManifests(t *testing.T) {
	isvc := func(predictor string) string {
		return "apiVersion: serving.serval.dev/v1beta1\nkind: InferenceService\nmetadata: {name: bad, namespace: default}\nspec:\n  predictor:\n" + predictor
	}
	runtime := func(spec string) string {
		return "apiVersion: serving.serval.dev/v1alpha1\nkind: ServingRuntime\nmetadata: {name: bad, namespace: default}\nspec:\n" + spec
	}
	model := "    model: {modelFormat: {name: sklearn}}\n"
	tests := []struct {
		name, manifest, want string
	}{
		{"unknown protocol", isvc("    model: {modelFormat: {name: sklearn}, protocolVersion: v3}\n"),
			`spec.predictor.model.protocolVersion: Unsupported value: "v3": supported values: "v1", "v2", "grpc-v1", "grpc-v2"`},
		{"negative minReplicas", isvc(model + "    minReplicas: -1\n"),
			"spec.predictor.minReplicas: Invalid value: -1: spec.predictor.minReplicas in body should be greater than or equal to 0"},
		{"canary over 100", isvc(model + "    canaryTrafficPercent: 101\n"),
			"spec.predictor.canaryTrafficPercent: Invalid value: 101: spec.predictor.canaryTrafficPercent in body should be less than or equal to 100"},
		{"unknown scale metric", isvc(model + "    scaleMetric: gpu\n"),
			`spec.predictor.scaleMetric: Unsupported value: "gpu": supported values: "cpu", "memory", "concurrency", "rps"`},
		{"zero scale target", isvc(model + "    scaleTarget: 0\n"),
			"spec.predictor.scaleTarget in body should be greater than or equal to 1"},
		{"model format without a name", isvc("    model: {modelFormat: {version: '1'}}\n"),
			"spec.predictor.model.modelFormat.name: Required value"},
		{"no predictor", "apiVersion: serving.serval.dev/v1beta1\nkind: InferenceService\nmetadata: {name: bad, namespace: default}\nspec: {}\n",
			"spec.predictor: Required value"},
		{"runtime priority 0", runtime("  containers: [{name: c, image: i}]\n  supportedModelFormats: [{name: sklearn, priority: 0}]\n"),
			"spec.supportedModelFormats[0].priority in body should be greater than or equal to 1"},
		{"runtime without containers", runtime("  supportedModelFormats: [{name: sklearn}]\n"),
			"spec.containers: Required value"},
		{"runtime with an unknown protocol", runtime("  containers: [{name: c, image: i}]\n  protocolVersions: [v9]\n"),
			`spec.protocolVersions[0]: Unsupported value: "v9"`},
		// The decode guard types what would otherwise be stored and then
		// fail to decode (hack/crdguard).
		{"quantity that does not parse", isvc("    model: {modelFormat: {name: sklearn}, resources: {requests: {cpu: lots}}}\n"),
			"spec.predictor.model.resources.requests.cpu: Invalid value: \"lots\": spec.predictor.model.resources.requests.cpu in body should match"},
		{"port as a string", isvc("    containers: [{name: c, ports: [{containerPort: '8080'}]}]\n"),
			`spec.predictor.containers[0].ports[0].containerPort: Invalid value: "string": spec.predictor.containers[0].ports[0].containerPort in body must be of type integer: "string"`},
		{"probe count as a string", isvc("    containers: [{name: c, readinessProbe: {periodSeconds: '10'}}]\n"),
			"spec.predictor.containers[0].readinessProbe.periodSeconds in body must be of type integer"},
		{"percent as an object", isvc(model + "    deploymentStrategy: {rollingUpdate: {maxSurge: {a: 1}}}\n"),
			"spec.predictor.deploymentStrategy.rollingUpdate.maxSurge"},
		{"pod-level quantity", isvc("    containers: [{name: c}]\n    resources: {limits: {memory: 1GB}}\n"),
			"spec.predictor.resources.limits.memory in body should match"},
		{"runtime port as a string", runtime("  containers: [{name: c, image: i, ports: [{containerPort: '8080'}]}]\n"),
			"spec.containers[0].ports[0].containerPort in body must be of type integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			require.NoError(t, sigsyaml.Unmarshal([]byte(tt.manifest), &obj.Object))
			err := env.Client.Create(context.Background(), obj, client.DryRunAll)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tt.want), "error %q does not contain %q", err, tt.want)
		})
	}
}

// TestSchemalessSubtreesKeepTheirFields: fields inside the schemaless pod and
// container subtrees survive a round trip through the API server.
func TestSchemalessSubtreesKeepTheirFields(t *testing.T) {
	obj := readObjects(t, repoPath(t, "config/samples/custom-container.yaml"))[0]
	obj.SetNamespace("default")
	obj.SetName("roundtrip")
	require.NoError(t, env.Client.Create(context.Background(), obj))
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got))
	containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "predictor", "containers")
	require.Len(t, containers, 1)
	ports, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "ports")
	require.Len(t, ports, 1)
	assert.Equal(t, "h2c", ports[0].(map[string]any)["name"])
}
