package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/pkg/testenv"
)

// waitEstablished waits until the API server serves a CRD just applied.
func waitEstablished(env *testenv.Environment, name string) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = name
	return envtest.WaitForCRDs(env.Config, []*apiextensionsv1.CustomResourceDefinition{crd},
		envtest.CRDInstallOptions{MaxTime: 30 * time.Second, PollInterval: 100 * time.Millisecond})
}

// TestChartRendersObjectsTheAPIServerAccepts renders the Helm chart in both
// certificate modes into an API server of its own (so nothing Serval's dev
// install created interferes): the chart's CRDs for real, every other object
// with a server-side dry run.
func TestChartRendersObjectsTheAPIServerAccepts(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	// helm install --create-namespace makes the release namespace.
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "serval-system"}}}
	require.NoError(t, env.Client.Create(context.Background(), ns))
	helm := filepath.Join(root, "bin", "helm")
	_, err = os.Stat(helm)
	require.NoError(t, err, "bin/helm is missing: make test builds it")
	for name, args := range map[string][]string{
		"self-managed certificates": nil,
		"external certificates":     {"--set", "webhook.certMode=external", "--set", "webhook.certSecret=serval-certs"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(helm, append([]string{"template", "serval", filepath.Join(root, "charts/serval"),
				"--namespace", "serval-system", "--include-crds"}, args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
			count := 0
			for {
				obj := &unstructured.Unstructured{}
				err := dec.Decode(&obj.Object)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				if len(obj.Object) == 0 {
					continue
				}
				count++
				opts := []client.ApplyOption{client.FieldOwner("chart-test"), client.ForceOwnership}
				if obj.GetKind() != "CustomResourceDefinition" {
					opts = append(opts, client.DryRunAll)
				}
				require.NoError(t, env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), opts...),
					"%s %s", obj.GetKind(), obj.GetName())
				if obj.GetKind() == "CustomResourceDefinition" {
					require.NoError(t, waitEstablished(env, obj.GetName()))
				}
			}
			require.Greater(t, count, 20, "CRDs, RBAC, manager, webhooks, config and runtimes")
		})
	}
}
