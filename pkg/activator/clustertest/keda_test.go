package clustertest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/activator/kedascaler"
	"github.com/serval-dev/serval/pkg/pki"
)

// startKEDA runs KEDA's operator (bin/keda-operator, built by make
// controlplane) against the test API server, with its CRDs and the
// certificates its metrics service needs.
func startKEDA(t *testing.T, env *testenv.Environment) {
	t.Helper()
	bin, err := testenv.BinDir()
	require.NoError(t, err)
	operator := filepath.Join(bin, "keda-operator")
	_, err = os.Stat(operator)
	require.NoError(t, err, "KEDA's operator is built by make controlplane")
	paths, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	require.NoError(t, err)

	dir := t.TempDir()
	admin, err := env.AddUser(envtest.User{Name: "keda", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kubeconfig, err := admin.KubeConfig()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600))
	ca, err := pki.Issue(pki.Template{CommonName: "keda-test-ca", CA: true, Validity: time.Hour}, nil, time.Now())
	require.NoError(t, err)
	leaf, err := pki.Issue(pki.Template{CommonName: "keda-operator", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		Validity: time.Hour}, ca, time.Now())
	require.NoError(t, err)
	for name, data := range map[string][]byte{"ca.crt": ca.CertPEM, "tls.crt": leaf.CertPEM, "tls.key": leaf.KeyPEM} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "keda"}}))

	cmd := exec.Command(operator, "--kubeconfig="+filepath.Join(dir, "kubeconfig"), "--cert-dir="+dir,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--metrics-service-bind-address=127.0.0.1:0",
		"--leader-elect=false", "--enable-cert-rotation=false", "--enable-webhook-patching=false", "--enable-apiservice-patching=false",
		"--zap-log-level=info")
	cmd.Env = append(os.Environ(), "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda")
	logs, err := os.Create(filepath.Join(dir, "keda.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(dir, "keda.log"))
			t.Logf("KEDA's operator:\n%s", tail(string(data), 60))
		}
	})
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// replicas is the Deployment's spec.replicas.
func replicas(t *testing.T, env *testenv.Environment, ns, name string) int32 {
	dep := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dep); err != nil {
		return -1
	}
	return ptr.Deref(dep.Spec.Replicas, 1)
}

// TestWithKEDA: KEDA's own operator, told by the activator's push
// scaler, scales an idle component to zero after its cooldown, back to one
// the moment requests are held (all of which are then served, each once),
// and to zero again once they are.
func TestWithKEDA(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	k8s := env.Client
	startKEDA(t, env)
	r := startRig(ctx, t, k8s, env.Config, activator.Limits{HoldTimeout: 2 * time.Minute})

	labels := map[string]string{"app": "iris"}
	require.NoError(t, k8s.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "iris-predictor"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "example.com/iris:1"}}}}}}))

	so := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"namespace": "team-a", "name": "iris-predictor"},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": "iris-predictor"},
			"minReplicaCount": int64(0), "maxReplicaCount": int64(1), "pollingInterval": int64(1), "cooldownPeriod": int64(2),
			"triggers": []any{map[string]any{"type": "external-push", "metadata": map[string]any{
				"scalerAddress": r.scaler, kedascaler.ServiceKey: "iris-predictor"}}},
		}}}
	require.NoError(t, k8s.Create(ctx, so))
	eventually(t, "KEDA scales the idle component to zero", func() bool { return replicas(t, env, "team-a", "iris-predictor") == 0 })

	rp := startReplica(t)
	wait := r.send(50, "iris-predictor.team-a.svc.cluster.local")
	eventually(t, "KEDA scales it to one for the held requests", func() bool { return replicas(t, env, "team-a", "iris-predictor") == 1 })
	// The replica is ready: its endpoint appears, as the EndpointSlice
	// controller would write it.
	require.NoError(t, k8s.Create(ctx, slice("team-a", "iris-predictor-abcde", "iris-predictor", "endpointslice-controller.k8s.io", r.ip, rp.port)))
	rp.servedEachOnce(t, wait())
	eventually(t, "back to zero once served and idle", func() bool { return replicas(t, env, "team-a", "iris-predictor") == 0 })
}

// eventually waits up to two minutes: KEDA polls and cools down.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
