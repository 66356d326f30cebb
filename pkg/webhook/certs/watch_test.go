package certs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestCheckServedTrusted: readiness fails while a webhook configuration's
// caBundle lacks the CA of the served certificate, and passes once it
// holds it among others.
func TestCheckServedTrusted(t *testing.T) {
	now := time.Now()
	m := testManager(&now)
	m.CertDir = t.TempDir()
	m.ValidatingWebhooks = []string{"serval-validating"}
	served, _, err := m.desired(nil, nil, false, false)
	require.NoError(t, err)
	other, _, err := m.desired(nil, nil, false, false)
	require.NoError(t, err)
	require.NoError(t, m.writeFiles(served))
	scheme := runtime.NewScheme()
	require.NoError(t, admissionregistrationv1.AddToScheme(scheme))
	config := func(bundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "serval-validating"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "a.serval.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: bundle}}}}
	}
	tests := []struct {
		name   string
		bundle []byte
		ok     bool
	}{
		{"the served CA", served[caCertKey], true},
		{"the served CA among others", mergeBundles(other[caCertKey], served[caCertKey]), true},
		{"another CA only", other[caCertKey], false},
		{"an empty bundle", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(config(tt.bundle)).Build()
			err := m.CheckServedTrusted(context.Background())
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, "the caBundle of serval-validating does not hold the CA of the certificate this replica serves; it is repaired within seconds")
		})
	}
}
