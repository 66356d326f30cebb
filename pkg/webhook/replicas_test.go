package webhook_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/operator"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
)

// TestSecretDeletedWithThreeReplicas: three managers share the certificate
// Secret behind one address (a round-robin TCP proxy, as a Service would
// spread connections); the Secret is deleted while creates go on. The
// replicas converge on one new Secret, every one of them serving a
// certificate of its CA; the bundle keeps the CA the others still serve
// until they load it, and no create is refused.
func TestSecretDeletedWithThreeReplicas(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ports := []string{hostPort}
	for range 2 {
		port, err := freePort()
		require.NoError(t, err)
		dir := t.TempDir()
		m, err := operator.New(ctx, env.Config, operator.Options{
			Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0", SkipNameValidation: true,
			WebhookHost: "127.0.0.1", WebhookPort: port, CertDir: dir, CertMode: operator.CertModeSelf,
		})
		require.NoError(t, err)
		go func() { _ = m.Start(ctx) }()
		ports = append(ports, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	proxy := roundRobin(t, ports)
	setWebhookURLs(t, "https://"+proxy)
	t.Cleanup(func() { setWebhookURLs(t, "https://"+hostPort) })

	var sent, refused atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			obj := &unstructured.Unstructured{}
			if err := sigsyaml.Unmarshal([]byte(isvcYAML("replicas", "", sklearnModel)), &obj.Object); err != nil {
				panic(err)
			}
			if err := k8s.Create(context.Background(), obj, client.DryRunAll); err != nil {
				refused.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
			sent.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	})
	before := secretData(t)["ca.crt"]
	require.Eventually(t, func() bool { return allServe(ports, before) }, 30*time.Second, 50*time.Millisecond,
		"every replica serves a certificate of the Secret's CA")
	require.NoError(t, k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: operator.CertSecretName}}))
	var after []byte
	require.Eventually(t, func() bool {
		s := &corev1.Secret{}
		if k8s.Get(ctx, types.NamespacedName{Namespace: managerNamespace, Name: operator.CertSecretName}, s) != nil {
			return false
		}
		after = s.Data["ca.crt"]
		return string(after) != string(before) && allServe(ports, after)
	}, 90*time.Second, 100*time.Millisecond, "the replicas converge on one new Secret")
	// Creates go on after the replicas converged.
	converged := sent.Load()
	require.Eventually(t, func() bool { return sent.Load() >= converged+20 }, 30*time.Second, 50*time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d creates through three replicas while the Secret was deleted and made anew; %d refused", sent.Load(), refused.Load())
	assert.Zero(t, refused.Load(), "no create is refused: %v", firstErr.Load())
}

// allServe reports whether the webhook server at each address presents a
// certificate that the CA bundle ca verifies.
func allServe(addrs []string, ca []byte) bool {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return false
	}
	for _, addr := range addrs {
		// The chain is verified below, against ca alone; the host name is
		// not what is being checked.
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
		if err != nil {
			return false
		}
		certs := conn.ConnectionState().PeerCertificates
		_ = conn.Close()
		if len(certs) == 0 {
			return false
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool}); err != nil {
			return false
		}
	}
	return true
}

// roundRobin forwards each connection on a new loopback address to the next
// of targets, and returns the address.
func roundRobin(t *testing.T, targets []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var next atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			target := targets[int(next.Add(1))%len(targets)]
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String()
}

// setWebhookURLs points every webhook of Serval's configurations at base,
// keeping their CA bundles.
func setWebhookURLs(t *testing.T, base string) {
	t.Helper()
	ctx := context.Background()
	rewrite := func(cc *admissionregistrationv1.WebhookClientConfig) {
		u, err := url.Parse(*cc.URL)
		require.NoError(t, err)
		b, err := url.Parse(base)
		require.NoError(t, err)
		u.Host = b.Host
		s := u.String()
		cc.URL = &s
	}
	require.NoError(t, retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := k8s.Get(ctx, types.NamespacedName{Name: servalwebhook.ValidatingConfigName}, vwc); err != nil {
			return err
		}
		for i := range vwc.Webhooks {
			rewrite(&vwc.Webhooks[i].ClientConfig)
		}
		return k8s.Update(ctx, vwc)
	}))
	require.NoError(t, retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := k8s.Get(ctx, types.NamespacedName{Name: servalwebhook.MutatingConfigName}, mwc); err != nil {
			return err
		}
		for i := range mwc.Webhooks {
			rewrite(&mwc.Webhooks[i].ClientConfig)
		}
		return k8s.Update(ctx, mwc)
	}))
}
