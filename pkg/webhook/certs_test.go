package webhook_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/operator"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
	"github.com/serval-dev/serval/pkg/webhook/certs"
)

// certManagerLike returns a certificate manager on the running manager's
// Secret and cert dir, as a restarted manager would build it.
func certManagerLike() *certs.Manager {
	return &certs.Manager{
		Client: k8s, Namespace: managerNamespace, SecretName: operator.CertSecretName, CertDir: certDir,
		DNSNames:         []string{"serval-webhook-service." + managerNamespace + ".svc", "serval-webhook-service." + managerNamespace + ".svc.cluster.local", "localhost"},
		IPs:              []net.IP{net.ParseIP("127.0.0.1")},
		MutatingWebhooks: []string{servalwebhook.MutatingConfigName}, ValidatingWebhooks: []string{servalwebhook.ValidatingConfigName},
	}
}

func secretData(t *testing.T) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: managerNamespace, Name: operator.CertSecretName}, s))
	return s.Data
}

func TestCAIsInjected(t *testing.T) {
	ca := secretData(t)["ca.crt"]
	require.NotEmpty(t, ca)
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Name: servalwebhook.ValidatingConfigName}, vwc))
	for _, w := range vwc.Webhooks {
		assert.Equal(t, ca, w.ClientConfig.CABundle, w.Name)
	}
}

// TestRestartReusesTheCertificate: a manager starting again finds a valid
// certificate in the Secret and keeps it.
func TestRestartReusesTheCertificate(t *testing.T) {
	before := secretData(t)
	require.NoError(t, certManagerLike().Ensure(context.Background()))
	assert.Equal(t, before, secretData(t))
	onDisk, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
	require.NoError(t, err)
	assert.Equal(t, before["tls.crt"], onDisk)
}

// TestForcedRotationKeepsServing: a new serving certificate, same CA; the
// server picks it up and admission keeps working.
func TestForcedRotationKeepsServing(t *testing.T) {
	before := secretData(t)
	serialBefore, err := servingCert()
	require.NoError(t, err)
	require.NoError(t, certManagerLike().Rotate(context.Background()))
	after := secretData(t)
	assert.NotEqual(t, before["tls.crt"], after["tls.crt"], "a new serving certificate")
	assert.Equal(t, before["ca.crt"], after["ca.crt"], "the same CA, so the injected bundle stays valid")
	require.Eventually(t, func() bool {
		serial, err := servingCert()
		return err == nil && serial != serialBefore
	}, 30*time.Second, 200*time.Millisecond, "the server serves the new certificate")
	require.NoError(t, create(isvcYAML("after-rotation", "", sklearnModel)), "admission works with the new certificate")
}
