// +kubebuilder:rbac:groups="",resources=secrets,verbs=create,namespace=serval-system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;update,resourceNames=serval-webhook-certs,namespace=serval-system
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=serval-mutating-webhook-configuration;serval-validating-webhook-configuration

package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/pki"
)

// Secret keys; tls.crt and tls.key also name the files in the cert dir, as
// controller-runtime's webhook server expects.
const (
	caCertKey  = "ca.crt"
	caKeyKey   = "ca.key"
	tlsCertKey = corev1.TLSCertKey
	tlsKeyKey  = corev1.TLSPrivateKeyKey
)

// PairFile is the serving certificate and its key in one file of the cert
// dir, replaced in one rename and read in one read (GetCertificate): what
// the webhook server serves when the manager keeps its own certificate.
// tls.crt and tls.key are two renames and two reads, and a server that
// reloads between them reads a new key beside the old certificate
// ("private key does not match public key").
const PairFile = "tls-pair.pem"

// Manager keeps the webhook serving certificate. Its Client must read
// uncached: the manager's cache holds no Secrets. With a Client that can
// watch (client.WithWatch), Start also watches the Secret and the webhook
// configurations by name, and repairs them within seconds of a change
// (a GitOps tool re-applying a configuration without its caBundle, the
// Secret deleted), instead of at the next check.
type Manager struct {
	Client     client.Client
	Namespace  string
	SecretName string
	CertDir    string
	DNSNames   []string
	IPs        []net.IP
	// MutatingWebhooks and ValidatingWebhooks are the configurations whose
	// caBundle the manager keeps up to date.
	MutatingWebhooks, ValidatingWebhooks []string
	// CAValidity, CertValidity and RenewBefore default to 10 years, 1 year
	// and 30 days.
	CAValidity, CertValidity, RenewBefore time.Duration
	// CheckInterval is how often Start re-checks (default 1h).
	CheckInterval time.Duration
	// BundleDelay is how long a changed CA bundle is given to reach the API
	// server's webhook clients before the server presents a certificate of
	// a new CA (default 5s).
	BundleDelay time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// served is what GetCertificate serves.
	served atomic.Pointer[servedPair]
}

func (m *Manager) defaults() {
	if m.CAValidity == 0 {
		m.CAValidity = 10 * 365 * 24 * time.Hour
	}
	if m.CertValidity == 0 {
		m.CertValidity = 365 * 24 * time.Hour
	}
	if m.RenewBefore == 0 {
		m.RenewBefore = 30 * 24 * time.Hour
	}
	if m.CheckInterval == 0 {
		m.CheckInterval = time.Hour
	}
	if m.BundleDelay == 0 {
		m.BundleDelay = 5 * time.Second
	}
	if m.Now == nil {
		m.Now = time.Now
	}
}

// Ensure makes the Secret, the files and the CA bundles current: it reuses a
// valid stored certificate, renews one that expires within RenewBefore or
// lacks a name, and creates what is missing.
func (m *Manager) Ensure(ctx context.Context) error { return m.ensure(ctx, false) }

// Rotate replaces the serving certificate now, keeping the CA, so clients
// that trust the CA keep trusting the server throughout.
func (m *Manager) Rotate(ctx context.Context) error { return m.ensure(ctx, true) }

// RotateCA replaces the CA and the serving certificate now (a CA that must
// go, say); the old CA stays in the bundle while it is valid, and the new
// one is trusted before the server presents a certificate it signed.
func (m *Manager) RotateCA(ctx context.Context) error { return m.ensureCA(ctx, true) }

// Start re-checks every CheckInterval, and at once when the Secret or a
// webhook configuration changes, until ctx ends; it is a manager Runnable.
func (m *Manager) Start(ctx context.Context) error {
	m.defaults()
	ticker := time.NewTicker(m.CheckInterval)
	defer ticker.Stop()
	changed := make(chan struct{}, 1)
	if w, ok := m.Client.(client.WithWatch); ok {
		for _, t := range m.watched() {
			go m.watch(ctx, w, t, changed)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-changed:
		}
		if err := m.Ensure(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Renew the webhook certificate")
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks and needs the files.
func (m *Manager) NeedLeaderElection() bool { return false }

func (m *Manager) ensure(ctx context.Context, forceServing bool) error {
	return m.ensureWith(ctx, forceServing, false)
}

func (m *Manager) ensureCA(ctx context.Context, forceCA bool) error {
	return m.ensureWith(ctx, true, forceCA)
}

func (m *Manager) ensureWith(ctx context.Context, forceServing, forceCA bool) error {
	m.defaults()
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.SecretName}
	err := m.Client.Get(ctx, key, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read Secret %s: %w", key, err)
	}
	exists := err == nil
	var keep []byte
	if !exists {
		// The Secret is gone (deleted, or never made): other replicas may
		// still serve certificates of the CAs the API server trusts now,
		// so a new CA joins them in the bundle rather than replace them.
		keep = m.injectedBundle(ctx)
	}
	data, changed, err := m.desired(secret.Data, keep, forceServing, forceCA)
	if err != nil {
		return err
	}
	if changed {
		secret.Data = data
		if exists {
			err = m.Client.Update(ctx, secret)
		} else {
			secret.ObjectMeta = metav1.ObjectMeta{Name: m.SecretName, Namespace: m.Namespace}
			err = m.Client.Create(ctx, secret)
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			// Another replica wrote it first: use theirs.
			return m.ensureWith(ctx, false, false)
		}
		if err != nil {
			return fmt.Errorf("store the webhook certificate in Secret %s: %w", key, err)
		}
		log.FromContext(ctx).Info("Stored a webhook serving certificate", "secret", key.String())
	}
	// The safe order for a CA rollover: the API server must trust the new
	// CA (the bundle holds the new and the old ones) before the server
	// presents a certificate it signed. So the bundle first, then, once the
	// API server has had time to see it, the files. The wait is on any
	// replacement of a served certificate, not only when this replica
	// injected: another replica may have injected the bundle a moment ago.
	if _, err := m.inject(ctx, data[caCertKey]); err != nil {
		return err
	}
	if m.replacesServedCert(data) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(m.BundleDelay):
		}
	}
	return m.writeFiles(data)
}

// replacesServedCert reports whether a serving certificate is in the cert
// dir already (the server presents it) and data holds another: the CA that
// signed the new one must then be trusted first.
func (m *Manager) replacesServedCert(data map[string][]byte) bool {
	cur, err := os.ReadFile(filepath.Join(m.CertDir, tlsCertKey))
	return err == nil && !bytes.Equal(cur, data[tlsCertKey])
}

// desired returns the Secret data to use and whether it differs from
// current. keep is a bundle whose unexpired CAs stay trusted beside a new
// CA.
func (m *Manager) desired(current map[string][]byte, keep []byte, forceServing, forceCA bool) (map[string][]byte, bool, error) {
	now := m.Now()
	ca, err := pki.Parse(current[caCertKey], current[caKeyKey])
	bundle := current[caCertKey]
	if err != nil || forceCA || now.Add(m.RenewBefore).After(ca.Cert.NotAfter) {
		old := bundle
		if ca, err = pki.Issue(pki.Template{CommonName: "serval-webhook-ca", Skew: time.Hour, Validity: m.CAValidity, CA: true}, nil, now); err != nil {
			return nil, false, err
		}
		// Keep the old CAs that are still valid in the bundle, while
		// certificates they signed may be in use: the newest ones, so that
		// a Secret deleted again and again does not grow the bundle
		// without end (each replica serves a certificate of the CA it read
		// last, one of the newest).
		bundle = mergeBundles(ca.CertPEM, newest(mergeBundles(unexpired(old, now), unexpired(keep, now)), maxOldCAs))
		forceServing = true
	}
	serving, err := pki.Parse(current[tlsCertKey], current[tlsKeyKey])
	if err == nil && !forceServing && pki.Verifies(ca.Cert, serving.Cert) && pki.Covers(serving.Cert, m.DNSNames, m.IPs) &&
		now.Add(m.RenewBefore).Before(serving.Cert.NotAfter) {
		return current, false, nil
	}
	if serving, err = pki.Issue(pki.Template{CommonName: m.DNSNames[0], DNSNames: m.DNSNames, IPs: m.IPs, Skew: time.Hour, Validity: m.CertValidity}, ca, now); err != nil {
		return nil, false, err
	}
	return map[string][]byte{caCertKey: bundle, caKeyKey: ca.KeyPEM, tlsCertKey: serving.CertPEM, tlsKeyKey: serving.KeyPEM}, true, nil
}

// mergeBundles concatenates PEM bundles, each certificate once.
func mergeBundles(bundles ...[]byte) []byte {
	var out []byte
	seen := map[string]bool{}
	for _, bundle := range bundles {
		for rest := bundle; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			if !seen[string(b.Bytes)] {
				seen[string(b.Bytes)] = true
				out = append(out, pem.EncodeToMemory(b)...)
			}
		}
	}
	return out
}

// maxOldCAs is how many earlier CAs a new CA's bundle keeps trusting.
const maxOldCAs = 2

// newest returns the n certificates of a PEM bundle issued last.
func newest(bundle []byte, n int) []byte {
	type entry struct {
		issued time.Time
		block  *pem.Block
	}
	var certs []entry
	for rest := bundle; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			certs = append(certs, entry{c.NotBefore, b})
		}
	}
	slices.SortStableFunc(certs, func(a, b entry) int { return b.issued.Compare(a.issued) })
	var out []byte
	for _, e := range certs[:min(n, len(certs))] {
		out = append(out, pem.EncodeToMemory(e.block)...)
	}
	return out
}

// unexpired returns the certificates of a PEM bundle that are still valid.
func unexpired(bundle []byte, now time.Time) []byte {
	var out []byte
	for rest := bundle; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil && now.Before(c.NotAfter) {
			out = append(out, pem.EncodeToMemory(b)...)
		}
	}
}

// writeFiles writes the serving pair to the cert dir, atomically and only on
// change, so the webhook server's watcher reloads exactly when needed.
func (m *Manager) writeFiles(data map[string][]byte) error {
	if err := os.MkdirAll(m.CertDir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{tlsKeyKey: data[tlsKeyKey], tlsCertKey: data[tlsCertKey], caCertKey: data[caCertKey],
		PairFile: append(append([]byte{}, data[tlsCertKey]...), data[tlsKeyKey]...)}
	// The pair first: the server's file is whole before the others change.
	for _, name := range []string{PairFile, tlsKeyKey, tlsCertKey, caCertKey} {
		path := filepath.Join(m.CertDir, name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, files[name]) {
			continue
		}
		if err := replaceFile(path, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// replaceFile writes data to path atomically, through a temporary file of
// its own: two writers (the manager's own, and a restarted one's) never
// rename each other's half-written file.
func replaceFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// webhookConfig is a webhook configuration and the client configs in it.
type webhookConfig struct {
	obj           client.Object
	clientConfigs func() []*admissionregistrationv1.WebhookClientConfig
}

func (m *Manager) targets() []webhookConfig {
	var out []webhookConfig
	for _, name := range m.MutatingWebhooks {
		c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
		out = append(out, webhookConfig{c, func() (ccs []*admissionregistrationv1.WebhookClientConfig) {
			for i := range c.Webhooks {
				ccs = append(ccs, &c.Webhooks[i].ClientConfig)
			}
			return ccs
		}})
	}
	for _, name := range m.ValidatingWebhooks {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
		out = append(out, webhookConfig{c, func() (ccs []*admissionregistrationv1.WebhookClientConfig) {
			for i := range c.Webhooks {
				ccs = append(ccs, &c.Webhooks[i].ClientConfig)
			}
			return ccs
		}})
	}
	return out
}

// inject sets the CA bundle on every webhook of the named configurations
// that exist, and reports whether it changed any; an absent configuration
// is skipped (the next check retries). A conflict (someone else updated the
// configuration meanwhile) is retried on the fresh object.
func (m *Manager) inject(ctx context.Context, bundle []byte) (bool, error) {
	injected := false
	for _, t := range m.targets() {
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			if err := m.Client.Get(ctx, client.ObjectKeyFromObject(t.obj), t.obj); err != nil {
				return err
			}
			changed := false
			for _, cc := range t.clientConfigs() {
				if !bytes.Equal(cc.CABundle, bundle) {
					cc.CABundle, changed = bundle, true
				}
			}
			if !changed {
				return nil
			}
			if err := m.Client.Update(ctx, t.obj); err != nil {
				return err
			}
			injected = true
			return nil
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return injected, fmt.Errorf("inject the CA into %s: %w", t.obj.GetName(), err)
		}
	}
	return injected, nil
}

// servedPair is the pair GetCertificate last parsed, and the bytes it
// parsed it from.
type servedPair struct {
	data []byte
	cert *tls.Certificate
}

// GetCertificate serves the pair in the cert dir's PairFile, read whole in
// one read, for tls.Config.GetCertificate: the certificate and the key
// always come from one write. The file is parsed again only when its bytes
// change.
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	data, err := os.ReadFile(filepath.Join(m.CertDir, PairFile))
	if err != nil {
		return nil, err
	}
	if last := m.served.Load(); last != nil && bytes.Equal(last.data, data) {
		return last.cert, nil
	}
	cert, err := tls.X509KeyPair(data, data)
	if err != nil {
		return nil, fmt.Errorf("the serving certificate in %s: %w", PairFile, err)
	}
	m.served.Store(&servedPair{data: data, cert: &cert})
	return &cert, nil
}
