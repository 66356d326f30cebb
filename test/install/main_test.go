package install

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/operator"
)

var root, managerBinary, helm string

func TestMain(m *testing.M) {
	// The node agents the sandbox plays here log through controller-runtime:
	// their errors only.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if root, err = testenv.RepoRoot(); err != nil {
		return 1, err
	}
	helm = filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		return 1, fmt.Errorf("bin/helm is missing: make test builds it")
	}
	dir, err := os.MkdirTemp("", "serval-install-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	if managerBinary, err = sandbox.BuildBinary(root, "./cmd/manager", dir); err != nil {
		return 1, err
	}
	return m.Run(), nil
}

// serviceAccount is the user the chart's manager runs as.
const (
	releaseNamespace = "serval-system"
	serviceAccount   = "system:serviceaccount:" + releaseNamespace + ":serval-manager"
)

// startCluster starts a sandbox with the upstream CRDs (Knative, Gateway
// API, Istio) and none of Serval's: the charts bring those.
func startCluster(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	// Two GPU nodes (four GPUs each): the samples' GPU pods (the LLM's,
	// vLLM's, the multi-node predictor's head and worker) need more than
	// one node holds.
	sb, err := sandbox.Start(context.Background(), sandbox.Options{Scheme: operator.Scheme(), GPUNodes: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Stop() })
	return sb
}

// runHelm runs bin/helm against the sandbox and returns its output.
func runHelm(t *testing.T, sb *sandbox.Sandbox, args ...string) string {
	t.Helper()
	out, err := helmOutput(sb, args...)
	require.NoError(t, err, "helm %s:\n%s", strings.Join(args, " "), out)
	return out
}

func helmOutput(sb *sandbox.Sandbox, args ...string) (string, error) {
	cmd := exec.Command(helm, append(args, "--kubeconfig", sb.KubeconfigPath)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(sb.Dir, "helm-cache"),
		"HELM_CONFIG_HOME="+filepath.Join(sb.Dir, "helm-config"), "HELM_DATA_HOME="+filepath.Join(sb.Dir, "helm-data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startManager runs the manager binary as the chart's ServiceAccount, with
// its webhooks on webhookPort and leader election on (its Lease and Events
// need rights too), and waits until it is ready.
func startManager(t *testing.T, sb *sandbox.Sandbox, webhookPort int, args ...string) *sandbox.Process {
	t.Helper()
	kubeconfig, err := sb.ImpersonatingKubeconfig(serviceAccount)
	require.NoError(t, err)
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args = append([]string{"--namespace=" + releaseNamespace, "--leader-elect", "--webhook-host=127.0.0.1",
		fmt.Sprintf("--webhook-port=%d", webhookPort), "--cert-dir=" + filepath.Join(sb.Dir, "webhook-certs"),
		"--metrics-bind-address=0", "--health-probe-bind-address=" + health}, args...)
	p, err := sb.StartProcessWithKubeconfig(fmt.Sprintf("manager-%d", time.Now().UnixNano()), kubeconfig, managerBinary, args...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			log := p.Log()
			if len(log) > 8000 {
				log = log[len(log)-8000:]
			}
			t.Logf("the end of the manager's log:\n%s", log)
		}
	})
	waitFor(t, "the manager to be ready", 2*time.Minute, func() bool {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// noForbidden fails the test if the manager was refused anything.
func noForbidden(t *testing.T, p *sandbox.Process) {
	t.Helper()
	for _, line := range strings.Split(p.Log(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the manager was refused something the chart should grant:\n%s", line)
		}
	}
}

// can asks the API server whether the chart's ServiceAccount may do verb on
// resource (group/resource) in ns ("" for every namespace), and the name.
func can(t *testing.T, sb *sandbox.Sandbox, verb, group, resource, ns, name string) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   serviceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Namespace: ns, Name: name,
		},
	}}
	require.NoError(t, sb.Client.Create(context.Background(), review))
	return review.Status.Allowed
}

func createNamespace(t *testing.T, sb *sandbox.Sandbox, name string) {
	t.Helper()
	require.NoError(t, sb.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}

func isReady(sb *sandbox.Sandbox, ns, name string) bool {
	isvc := &v1beta1.InferenceService{}
	return sb.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, isvc) == nil &&
		meta.IsStatusConditionTrue(isvc.Status.Conditions, v1beta1.ConditionReady)
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
