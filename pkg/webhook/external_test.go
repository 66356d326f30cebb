package webhook_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/operator"
)

// TestExternalCertificates: with --cert-mode=external the manager serves the
// certificate it finds in its cert dir (as cert-manager would mount it) and
// creates no Secret of its own.
func TestExternalCertificates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ns := "serval-external"
	require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	dir := t.TempDir()
	for _, f := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(certDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o600))
	}
	port, err := freePort()
	require.NoError(t, err)
	mgr, err := operator.New(ctx, env.Config, operator.Options{
		Namespace: ns, MetricsAddr: "0", HealthProbeAddr: "0",
		WebhookHost: "127.0.0.1", WebhookPort: port, CertDir: dir, CertMode: operator.CertModeExternal,
		SkipNameValidation: true,
	})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var served *x509.Certificate
	require.Eventually(t, func() bool {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads the certificate
		if err != nil {
			return false
		}
		defer conn.Close()
		served = conn.ConnectionState().PeerCertificates[0]
		return true
	}, 30*time.Second, 100*time.Millisecond)
	data, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	assert.Equal(t, block.Bytes, served.Raw, "the mounted certificate is served")
	err = k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: operator.CertSecretName}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "external mode creates no Secret")
}
