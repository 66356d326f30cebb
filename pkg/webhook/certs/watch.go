package certs

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/pki"
)

// watchTarget is one object the manager keeps, watched by name.
type watchTarget struct {
	list      client.ObjectList
	namespace string
	name      string
}

// watched are the Secret and the webhook configurations.
func (m *Manager) watched() []watchTarget {
	out := []watchTarget{{list: &corev1.SecretList{}, namespace: m.Namespace, name: m.SecretName}}
	for _, name := range m.MutatingWebhooks {
		out = append(out, watchTarget{list: &admissionregistrationv1.MutatingWebhookConfigurationList{}, name: name})
	}
	for _, name := range m.ValidatingWebhooks {
		out = append(out, watchTarget{list: &admissionregistrationv1.ValidatingWebhookConfigurationList{}, name: name})
	}
	return out
}

// watch signals changed at every event of t, and watches again when the
// watch ends (the API server closes watches after a while), a second after
// a failure. Only t is watched: a field selector on its name, which RBAC
// restricted to that name allows.
func (m *Manager) watch(ctx context.Context, w client.WithWatch, t watchTarget, changed chan<- struct{}) {
	for ctx.Err() == nil {
		opts := []client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", t.name)}}
		if t.namespace != "" {
			opts = append(opts, client.InNamespace(t.namespace))
		}
		wi, err := w.Watch(ctx, t.list, opts...)
		if err != nil {
			log.FromContext(ctx).V(1).Info("Watch for webhook certificate drift", "name", t.name, "error", err.Error())
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for range wi.ResultChan() {
			select {
			case changed <- struct{}{}:
			default: // a check is pending already
			}
		}
		wi.Stop()
	}
}

// injectedBundle is the CA bundle the webhook configurations hold now, or
// nil. When the Secret is gone, its CAs are still what the API server
// trusts, and what every replica's served certificate chains to.
func (m *Manager) injectedBundle(ctx context.Context) []byte {
	for _, t := range m.targets() {
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(t.obj), t.obj); err != nil {
			continue
		}
		for _, cc := range t.clientConfigs() {
			if len(cc.CABundle) > 0 {
				return cc.CABundle
			}
		}
	}
	return nil
}

// CheckServedTrusted returns an error while the certificate this replica
// serves (in CertDir) does not chain to a CA in every webhook
// configuration's bundle: the API server would refuse its answers. It is
// the manager's readiness check in the self-managed mode.
func (m *Manager) CheckServedTrusted(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(m.CertDir, tlsCertKey))
	if err != nil {
		return fmt.Errorf("no serving certificate yet: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return errors.New("the serving certificate is not PEM")
	}
	served, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("the serving certificate: %w", err)
	}
	for _, t := range m.targets() {
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(t.obj), t.obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		for _, cc := range t.clientConfigs() {
			if !trustedBy(cc.CABundle, served) {
				return fmt.Errorf("the caBundle of %s does not hold the CA of the certificate this replica serves; it is repaired within seconds", t.obj.GetName())
			}
		}
	}
	return nil
}

// trustedBy reports whether cert chains to a CA of the PEM bundle.
func trustedBy(bundle []byte, cert *x509.Certificate) bool {
	for rest := bundle; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return false
		}
		if ca, err := x509.ParseCertificate(b.Bytes); err == nil && pki.Verifies(ca, cert) {
			return true
		}
	}
}
