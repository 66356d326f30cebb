package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
)

// waitEstablished waits until the API server serves a CRD just applied.
func waitEstablished(env *testenv.Environment, name string) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = name
	return envtest.WaitForCRDs(env.Config, []*apiextensionsv1.CustomResourceDefinition{crd},
		envtest.CRDInstallOptions{MaxTime: 30 * time.Second, PollInterval: 100 * time.Millisecond})
}

// TestChartRendersObjectsTheAPIServerAccepts renders the Helm charts into
// an API server of its own (so nothing Serval's dev install created
// interferes), with cert-manager's CRDs: serval-crds for real, then the
// serval chart in each certificate mode and a namespace-scoped one with a
// server-side dry run, so the API server checks every object (the
// cert-manager Issuer and Certificate against cert-manager's own schema).
func TestChartRendersObjectsTheAPIServerAccepts(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	certManager, err := testenv.UpstreamCRDPathsOf(testenv.CertManager)
	require.NoError(t, err)
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true, CRDPaths: certManager})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	for _, name := range []string{"serval-system", "team-a"} {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
		require.NoError(t, env.Client.Create(context.Background(), ns))
	}
	helm := filepath.Join(root, "bin", "helm")
	_, err = os.Stat(helm)
	require.NoError(t, err, "bin/helm is missing: make test builds it")
	render := func(t *testing.T, chart string, args ...string) []*unstructured.Unstructured {
		cmd := exec.Command(helm, append([]string{"template", "serval", filepath.Join(root, chart), "--namespace", "serval-system"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		var objs []*unstructured.Unstructured
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := dec.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				return objs
			}
			require.NoError(t, err)
			if len(obj.Object) > 0 {
				objs = append(objs, obj)
			}
		}
	}
	apply := func(t *testing.T, obj *unstructured.Unstructured, opts ...client.ApplyOption) {
		opts = append(opts, client.FieldOwner("chart-test"), client.ForceOwnership)
		require.NoError(t, env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), opts...),
			"%s %s", obj.GetKind(), obj.GetName())
	}

	crds := render(t, "charts/serval-crds")
	require.Len(t, crds, 11)
	for _, crd := range crds {
		assert.Equal(t, "keep", crd.GetAnnotations()["helm.sh/resource-policy"], "uninstall keeps %s", crd.GetName())
		apply(t, crd)
		require.NoError(t, waitEstablished(env, crd.GetName()))
	}

	for name, tc := range map[string]struct {
		args  []string
		kinds []string
	}{
		"self-managed certificates": {nil, []string{"ClusterRole", "Deployment", "ClusterServingRuntime", "ClusterStorageContainer"}},
		"cert-manager":              {[]string{"--set", "webhook.certMode=external"}, []string{"Issuer", "Certificate"}},
		"cert-manager with a ClusterIssuer": {[]string{"--set", "webhook.certMode=external", "--set", "webhook.certManager.issuerRef.kind=ClusterIssuer",
			"--set", "webhook.certManager.issuerRef.name=corp-ca"}, []string{"Certificate"}},
		"own certificate Secret": {[]string{"--set", "webhook.certMode=external", "--set", "webhook.certManager.enabled=false", "--set", "webhook.certSecret=mine"}, nil},
		"namespace-scoped, three replicas": {[]string{"--set", "watchNamespaces={team-a}", "--set", "replicas=3"},
			[]string{"Role", "RoleBinding", "PodDisruptionBudget"}},
		"the model caches' node agent": {[]string{"--set", "localModel.enabled=true"}, []string{"Namespace", "ServiceAccount", "ClusterRoleBinding"}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, "charts/serval", tc.args...)
			kinds := map[string]bool{}
			for _, obj := range objs {
				kinds[obj.GetKind()] = true
				apply(t, obj, client.DryRunAll)
				if obj.GetKind() == "ValidatingWebhookConfiguration" || obj.GetKind() == "MutatingWebhookConfiguration" {
					_, injected := obj.GetAnnotations()["cert-manager.io/inject-ca-from"]
					assert.Equal(t, slices.Contains(tc.kinds, "Certificate"), injected, "cert-manager injects the CA when it issues the certificate")
				}
			}
			for _, k := range tc.kinds {
				assert.True(t, kinds[k], "renders a %s", k)
			}
			assert.Greater(t, len(objs), 20, "RBAC, manager, webhooks, config and runtimes")
		})
	}
}
