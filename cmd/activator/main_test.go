package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/activator/kedascaler"
)

// freePort is a port nothing listens on.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestBinary builds the activator and runs it against a real API server
// as the chart does: it becomes ready, answers a host no component has
// with a 404 in JSON, serves KEDA's push stream, and stops on SIGTERM
// within its drain, the stream open.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary against an API server")
	}
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serval-system"}}))
	dir := t.TempDir()
	user, err := env.AddUser(envtest.User{Name: "activator", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kubeconfig, err := user.KubeConfig()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600))
	bin := filepath.Join(dir, "activator")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	httpPort, scalerPort, metricsPort := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, "--kubeconfig="+filepath.Join(dir, "kubeconfig"), "--namespace=serval-system",
		"--addr=127.0.0.1:"+strconv.Itoa(httpPort), "--scaler-addr=127.0.0.1:"+strconv.Itoa(scalerPort), "--metrics-addr=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--drain-delay=100ms", "--shutdown-timeout=1s")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	testenv.Eventually(t, "ready", func() bool {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(httpPort), nil)
	req.Host = "nobody.example.com"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	var msg map[string]string
	require.NoError(t, json.Unmarshal(body, &msg))
	assert.Contains(t, msg["error"], `no component serves the host "nobody.example.com"`)

	// KEDA's push stream stays open: the stop does not wait for it.
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(scalerPort), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := externalscaler.NewExternalScalerClient(conn).StreamIsActive(context.Background(),
		&externalscaler.ScaledObjectRef{Name: "iris", Namespace: "team-a", ScalerMetadata: map[string]string{kedascaler.ServiceKey: "iris-predictor"}})
	require.NoError(t, err)
	first, err := stream.Recv()
	require.NoError(t, err)
	assert.False(t, first.Result)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "a clean stop")
	case <-time.After(15 * time.Second):
		t.Fatal("the activator did not stop")
	}
}
