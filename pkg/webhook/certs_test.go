package webhook_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

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

// TestCARolloverNeverFailsAdmission replaces the CA while admission requests
// keep coming: the API server trusts the new CA before the server presents a
// certificate it signed, so not one request fails.
func TestCARolloverNeverFailsAdmission(t *testing.T) {
	before := secretData(t)
	stop := make(chan struct{})
	type sample struct {
		at     time.Time
		serial string
		bundle []byte
	}
	type result struct {
		sent    int
		errs    []error
		samples []sample
	}
	done := make(chan result)
	var sent atomic.Int64 // read while the requests go on
	go func() {
		var r result
		for {
			select {
			case <-stop:
				done <- r
				return
			default:
			}
			vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if k8s.Get(context.Background(), types.NamespacedName{Name: servalwebhook.ValidatingConfigName}, vwc) == nil {
				serial, _ := servingCert()
				r.samples = append(r.samples, sample{time.Now(), serial, vwc.Webhooks[0].ClientConfig.CABundle})
			}
			obj := &unstructured.Unstructured{}
			require.NoError(t, sigsyaml.Unmarshal([]byte(isvcYAML("rollover", "", sklearnModel)), &obj.Object))
			if err := k8s.Create(context.Background(), obj, client.DryRunAll); err != nil {
				r.errs = append(r.errs, err)
			}
			r.sent++
			sent.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	m := certManagerLike()
	m.BundleDelay = 2 * time.Second
	require.NoError(t, m.RotateCA(context.Background()))
	after := secretData(t)
	require.NotEqual(t, before["ca.key"], after["ca.key"], "a new CA")
	assert.Contains(t, string(after["ca.crt"]), string(before["ca.crt"]), "the old CA stays in the bundle")
	require.Eventually(t, func() bool {
		onDisk, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
		if err != nil || !bytes.Equal(onDisk, after["tls.crt"]) {
			return false
		}
		serial, err := servingCert()
		return err == nil && serial == serialOf(t, after["tls.crt"])
	}, 30*time.Second, 100*time.Millisecond, "the server presents the certificate of the new CA")
	sentThen := sent.Load()
	require.Eventually(t, func() bool { return sent.Load() >= sentThen+20 }, 30*time.Second, 20*time.Millisecond,
		"requests against the new certificate too")
	close(stop)
	r := <-done
	t.Logf("%d admission requests during the rollover", r.sent)
	assert.Greater(t, r.sent, 50)
	assert.Empty(t, r.errs, "admission never failed")
	// The order itself: the bundle trusted the new CA before the server
	// presented the new certificate.
	newSerial := serialOf(t, after["tls.crt"])
	var trusted, presented time.Time
	for _, s := range r.samples {
		if trusted.IsZero() && bytes.Equal(s.bundle, after["ca.crt"]) {
			trusted = s.at
		}
		if presented.IsZero() && s.serial == newSerial {
			presented = s.at
		}
	}
	require.False(t, presented.IsZero(), "the new certificate was seen")
	require.False(t, trusted.IsZero(), "the new bundle was seen")
	assert.True(t, trusted.Before(presented), "the new CA was trusted (%s) before the server presented its certificate (%s)",
		trusted.Format(time.StampMilli), presented.Format(time.StampMilli))
}

func serialOf(t *testing.T, certPEM []byte) string {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert.SerialNumber.String()
}
