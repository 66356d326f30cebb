package webhook_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/operator"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
)

const managerNamespace = "serval-system"

var (
	env      *testenv.Environment
	k8s      client.Client
	certDir  string
	hostPort string
	// metricsHostPort serves the manager's metrics, securely as by default.
	metricsHostPort string
)

func TestMain(m *testing.M) {
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: operator.Scheme()},
		func(e *testenv.Environment) {
			env, k8s = e, e.Client
			if err := startManager(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startManager installs the webhook configurations by URL and starts the
// manager with its own certificates, as `serval dev` does.
func startManager() error {
	ctx, cancel := context.WithCancel(context.Background())
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}); err != nil {
		cancel()
		return err
	}
	port, err := freePort()
	if err != nil {
		cancel()
		return err
	}
	hostPort = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	root, _ := testenv.RepoRoot()
	if err := servalwebhook.InstallLocal(ctx, k8s, filepath.Join(root, "config/webhook/manifests.yaml"), "https://"+hostPort); err != nil {
		cancel()
		return err
	}
	certDir, err = os.MkdirTemp("", "serval-webhook-test-")
	if err != nil {
		cancel()
		return err
	}
	metricsPort, err := freePort()
	if err != nil {
		cancel()
		return err
	}
	metricsHostPort = net.JoinHostPort("127.0.0.1", strconv.Itoa(metricsPort))
	mgr, err := operator.New(ctx, env.Config, operator.Options{
		Namespace: managerNamespace, MetricsAddr: metricsHostPort, HealthProbeAddr: "0",
		WebhookHost: "127.0.0.1", WebhookPort: port, CertDir: certDir, CertMode: operator.CertModeSelf,
	})
	if err != nil {
		cancel()
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	env.AddCleanup(func() { cancel(); <-done; _ = os.RemoveAll(certDir) })
	return waitServing()
}

// waitServing waits until the webhook server answers TLS.
func waitServing() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := servingCert(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the webhook server did not start on %s", hostPort)
}

// servingCert returns the serial number of the certificate the server presents.
func servingCert() (string, error) {
	conn, err := tls.Dial("tcp", hostPort, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the certificate
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}
