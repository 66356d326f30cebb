package install

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/operator"
)

// TestInstallUpgradeUninstall installs both charts for real, runs the
// manager as the chart's ServiceAccount, applies every sample (all Ready,
// nothing Forbidden), checks that the grants are no broader than the code
// needs, upgrades both charts (a changed CRD, and the main chart while the
// webhook is down), and uninstalls both (CRDs and InferenceServices stay).
func TestInstallUpgradeUninstall(t *testing.T) {
	start := time.Now()
	ctx := context.Background()
	sb := startCluster(t)
	port := freePort(t)
	runHelm(t, sb, "install", "serval-crds", "charts/serval-crds", "--wait")
	values := []string{"--namespace", releaseNamespace, "--create-namespace", "--set", "webhook.url=https://127.0.0.1:" + strconv.Itoa(port)}
	runHelm(t, sb, append([]string{"install", "serval", "charts/serval"}, values...)...)

	runtimes := &v1alpha1.ClusterServingRuntimeList{}
	require.NoError(t, sb.Client.List(ctx, runtimes))
	assert.GreaterOrEqual(t, len(runtimes.Items), 10, "the chart's runtimes installed before any webhook served")

	m := startManager(t, sb, port)
	waitFor(t, "the manager to inject its CA bundle", time.Minute, func() bool {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		return sb.Client.Get(ctx, types.NamespacedName{Name: "serval-validating-webhook-configuration"}, cfg) == nil &&
			len(cfg.Webhooks) > 0 && len(cfg.Webhooks[0].ClientConfig.CABundle) > 0
	})

	// A Knative installation set up for Serval, as serval dev plays it.
	require.NoError(t, dev.ApplyFile(ctx, sb.Client, filepath.Join(root, "config/dev/knative-config-features.yaml"), ""))
	const ns = "samples"
	createNamespace(t, sb, ns)
	// The model cache sample's download Jobs run there; its node agents
	// run here (kwok runs no container), their Jobs completed by kwok.
	createNamespace(t, sb, "serval-localmodel-jobs")
	playCtx, stopPlaying := context.WithCancel(ctx)
	defer stopPlaying()
	go sb.PlayNodeAgents(playCtx, t.TempDir(), releaseNamespace)
	names := applySamples(t, sb, ns)
	require.GreaterOrEqual(t, len(names), 18, "one InferenceService per sample")
	for _, name := range names {
		waitFor(t, name+" to be Ready", 2*time.Minute, func() bool { return isReady(sb, ns, name) })
	}
	noForbidden(t, m)

	// The bundled label exempts a preset from admission only in Serval's
	// namespace: a tenant's labelled preset is still checked.
	bomb := func(namespace string) *v1alpha2.LLMInferenceServiceConfig {
		return &v1alpha2.LLMInferenceServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: namespace,
			Labels: map[string]string{"serving.serval.dev/bundled": "true"}},
			Spec: v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{Containers: []corev1.Container{{
				Name: "main", Env: []corev1.EnvVar{{Name: "X", Value: "{{ range 20000000 }}aaaaaaaaaa{{ end }}"}}}}}}}}
	}
	err := sb.Client.Create(ctx, bomb(ns))
	require.Error(t, err, "a tenant's preset labelled bundled is admitted only after the webhook's checks")
	assert.Contains(t, err.Error(), "serval-config templates.maxOutputBytes")
	own := bomb(releaseNamespace)
	require.NoError(t, sb.Client.Create(ctx, own), "Serval's own namespace keeps the exemption")
	require.NoError(t, sb.Client.Delete(ctx, own))

	// No broader than needed.
	for _, c := range []struct {
		verb, group, resource, ns, name string
		allowed                         bool
	}{
		{"update", "", "secrets", "kube-system", "", false},
		{"list", "", "secrets", "", "", false},
		{"watch", "", "secrets", ns, "", false},
		// LLMInferenceServices' serving certificates: created and applied
		// by name, never listed or updated whole.
		{"create", "", "secrets", ns, "", true},
		{"patch", "", "secrets", ns, "llama-kserve-self-signed-certs", true},
		{"delete", "", "secrets", ns, "", false},
		{"get", "", "secrets", ns, "storage-config", true},
		{"create", "", "secrets", releaseNamespace, "", true},
		{"update", "", "secrets", releaseNamespace, "serval-webhook-certs", true},
		{"update", "", "secrets", releaseNamespace, "another-secret", false},
		{"update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "serval-validating-webhook-configuration", true},
		{"update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "someone-elses", false},
		{"list", "", "configmaps", "", "", false},
		{"get", "", "configmaps", "kube-system", "kube-root-ca.crt", false},
		{"get", "", "configmaps", "knative-serving", "config-features", true},
		{"list", "", "serviceaccounts", "", "", false},
		{"create", "", "events", releaseNamespace, "", true},
		{"create", "", "events", ns, "", false},
		{"create", "events.k8s.io", "events", ns, "", true},
	} {
		assert.Equal(t, c.allowed, can(t, sb, c.verb, c.group, c.resource, c.ns, c.name), "%s %s/%s in %q named %q", c.verb, c.group, c.resource, c.ns, c.name)
	}

	// The main chart upgrades while the webhook is down: its runtimes are
	// exempt from it.
	m.Terminate(30 * time.Second)
	runHelm(t, sb, append([]string{"upgrade", "serval", "charts/serval", "--set", "config.ingress.domain=upgraded.example.com"}, values...)...)

	// A changed CRD reaches the cluster with helm upgrade.
	crds := filepath.Join(t.TempDir(), "serval-crds")
	require.NoError(t, os.CopyFS(crds, os.DirFS(filepath.Join(root, "charts/serval-crds"))))
	file := filepath.Join(crds, "files", "serving.serval.dev_inferenceservices.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	changed := strings.Replace(string(data), "    shortNames:\n", "    shortNames:\n    - upgradedisvc\n", 1)
	require.NotEqual(t, string(data), changed, "the CRD has shortNames to extend")
	require.NoError(t, os.WriteFile(file, []byte(changed), 0o644))
	runHelm(t, sb, "upgrade", "serval-crds", crds, "--wait")
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, sb.Client.Get(ctx, types.NamespacedName{Name: "inferenceservices.serving.serval.dev"}, crd))
	assert.Contains(t, crd.Spec.Names.ShortNames, "upgradedisvc", "helm upgrade updated the CRD")

	// Uninstall keeps the CRDs and every InferenceService; of Serval's own
	// objects, only the two docs/installation.md names stay, and its
	// command removes them.
	runHelm(t, sb, "uninstall", "serval", "--namespace", releaseNamespace, "--wait")
	runHelm(t, sb, "uninstall", "serval-crds", "--wait")
	assert.Equal(t, []string{"lease/serval-manager.serving.serval.dev", "secret/serval-webhook-certs"}, leftovers(t, sb, releaseNamespace),
		"what helm uninstall leaves of Serval's")
	require.NoError(t, sb.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "serval-webhook-certs"}}))
	require.NoError(t, sb.Client.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: operator.LeaderElectionID}}))
	assert.Empty(t, leftovers(t, sb, releaseNamespace), "nothing of Serval's is left after the documented command")
	require.NoError(t, sb.Client.Get(ctx, types.NamespacedName{Name: "inferenceservices.serving.serval.dev"}, crd))
	assert.Nil(t, crd.DeletionTimestamp, "the CRD stays")
	left := &v1beta1.InferenceServiceList{}
	require.NoError(t, sb.Client.List(ctx, left, client.InNamespace(ns)))
	assert.Len(t, left.Items, len(names), "every InferenceService stays")
	t.Logf("install, %d samples Ready as the chart's ServiceAccount, upgrade and uninstall: %s", len(names), time.Since(start).Round(time.Second))
}

// TestNamespaceScopedInstall installs with watchNamespaces: Roles in the
// served namespace only; an InferenceService elsewhere is ignored, and the
// manager is refused nothing.
func TestNamespaceScopedInstall(t *testing.T) {
	ctx := context.Background()
	sb := startCluster(t)
	createNamespace(t, sb, "team-a")
	createNamespace(t, sb, "team-b")
	port := freePort(t)
	runHelm(t, sb, "install", "serval-crds", "charts/serval-crds", "--wait")
	runHelm(t, sb, "install", "serval", "charts/serval", "--namespace", releaseNamespace, "--create-namespace",
		"--set", "webhook.url=https://127.0.0.1:"+strconv.Itoa(port), "--set", "watchNamespaces={team-a}")
	m := startManager(t, sb, port, "--watch-namespaces=team-a")

	sample := filepath.Join(root, "config/samples/sklearn.yaml")
	eventually(t, "the sample applied in team-a", func() error { return dev.ApplyFile(ctx, sb.Client, sample, "team-a") })
	require.NoError(t, dev.ApplyFile(ctx, sb.Client, sample, "team-b"), "team-b is not admitted by Serval's webhooks")
	waitFor(t, "the sample in team-a to be Ready", 2*time.Minute, func() bool { return isReady(sb, "team-a", "sklearn-iris") })

	ignored := &v1beta1.InferenceService{}
	require.NoError(t, sb.Client.Get(ctx, types.NamespacedName{Namespace: "team-b", Name: "sklearn-iris"}, ignored))
	assert.Empty(t, ignored.Status.Conditions, "an InferenceService outside watchNamespaces is not reconciled")
	err := sb.Client.Get(ctx, types.NamespacedName{Namespace: "team-b", Name: "sklearn-iris-predictor"}, &appsv1.Deployment{})
	assert.Error(t, err, "no Deployment in team-b")
	noForbidden(t, m)

	for _, c := range []struct {
		verb, group, resource, ns string
		allowed                   bool
	}{
		{"create", "apps", "deployments", "team-a", true},
		{"create", "apps", "deployments", "team-b", false},
		{"list", "", "pods", "", false},
		{"list", "", "pods", "team-a", true},
		{"get", "", "secrets", "team-b", false},
		{"list", "serving.serval.dev", "clusterservingruntimes", "", true},
		{"list", "serving.serval.dev", "clusterstoragecontainers", "", true},
	} {
		assert.Equal(t, c.allowed, can(t, sb, c.verb, c.group, c.resource, c.ns, ""), "%s %s/%s in %q", c.verb, c.group, c.resource, c.ns)
	}
	// Secrets: watched only by the name storage-config (their metadata,
	// for one created late), never listed whole.
	assert.True(t, can(t, sb, "watch", "", "secrets", "team-a", "storage-config"), "watch the storage-config Secrets")
	assert.False(t, can(t, sb, "list", "", "secrets", "team-a", ""), "list every Secret")
}

// applySamples applies every file of config/samples to ns (through the
// webhooks, retrying while they come up), plays Knative's controller for
// the Knative ones, and returns the InferenceServices' names.
func applySamples(t *testing.T, sb *sandbox.Sandbox, ns string) []string {
	t.Helper()
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(root, "config/samples/*.yaml"))
	require.NoError(t, err)
	// The KEDA sample needs KEDA's CRD; its operator is played below.
	kedaCRD, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(sb.Env.Config, envtest.CRDInstallOptions{Paths: kedaCRD})
	require.NoError(t, err)
	for _, f := range files {
		eventually(t, "applying "+filepath.Base(f), func() error { return dev.ApplyFile(ctx, sb.Client, f, ns) })
	}
	list := &v1beta1.InferenceServiceList{}
	require.NoError(t, sb.Client.List(ctx, list, client.InNamespace(ns)))
	var names []string
	for _, isvc := range list.Items {
		names = append(names, isvc.Name)
		if strings.EqualFold(isvc.Annotations[v1beta1.DeploymentModeAnnotation], "Knative") {
			require.NoError(t, sb.PlayKnativeReady(ctx, ns, isvc.Name+"-predictor", 2*time.Minute))
		}
		if isvc.Annotations[v1beta1.AutoscalerClassAnnotation] == "keda" {
			require.NoError(t, sb.PlayKEDAReady(ctx, ns, isvc.Name+"-predictor", 2*time.Minute))
		}
	}
	return names
}

// eventually retries f for up to a minute, for calls that go through a
// webhook that is still starting.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for err := f(); err != nil; err = f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
