package servingcert

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func TestIssueMakesAnECDSACertificateForTheNames(t *testing.T) {
	b, err := Issue([]string{"a.ns.svc", "a.ns.svc.cluster.local"}, t0)
	require.NoError(t, err)
	block, _ := pem.Decode(b.Cert)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, x509.ECDSA, cert.PublicKeyAlgorithm)
	assert.Equal(t, []string{"localhost", "a.ns.svc", "a.ns.svc.cluster.local"}, cert.DNSNames)
	require.Len(t, cert.IPAddresses, 1)
	assert.True(t, cert.IPAddresses[0].Equal(Loopback))
	assert.Equal(t, t0.Add(Validity), cert.NotAfter)
	assert.Contains(t, cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
}

func TestFits(t *testing.T) {
	names := []string{"a.ns.svc", "b.ns.svc"}
	b, err := Issue(names, t0)
	require.NoError(t, err)
	other, err := Issue(names, t0)
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		bundle Bundle
		names  []string
		now    time.Time
		fits   bool
	}{
		{"the same names", b, names, t0, true},
		{"fewer names: a name that went", b, names[:1], t0, true},
		{"localhost named explicitly", b, []string{"localhost", "a.ns.svc"}, t0, true},
		{"a name it does not cover", b, append(names, "c.ns.svc"), t0, false},
		{"just before renewal", b, names, t0.Add(Validity - RenewBefore - time.Second), true},
		{"within the renewal window", b, names, t0.Add(Validity - RenewBefore + time.Second), false},
		{"expired", b, names, t0.Add(Validity + time.Hour), false},
		{"empty", Bundle{}, names, t0, false},
		{"not PEM", Bundle{Key: []byte("key"), Cert: []byte("cert")}, names, t0, false},
		{"a key that is not the certificate's", Bundle{Key: other.Key, Cert: b.Cert}, names, t0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.fits, c.bundle.Fits(c.names, c.now))
		})
	}
}

// countingReader counts the reads that reach the client.
type countingReader struct {
	client.Reader
	gets int
	err  error
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	if r.err != nil {
		return r.err
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func secret(key types.NamespacedName, owner types.UID, b Bundle) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "serving.serval.dev/v1alpha2", Kind: "LLMInferenceService",
				Name: "llm", UID: owner, Controller: ptr.To(true)}}},
		Data: map[string][]byte{corev1.TLSCertKey: b.Cert, corev1.TLSPrivateKeyKey: b.Key},
	}
}

func TestKeeperReusesTheLiveCertificateAndReadsItOnce(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "llm-kserve-self-signed-certs"}
	names := []string{"llm.ns.svc"}
	live, err := Issue(names, t0)
	require.NoError(t, err)
	reader := &countingReader{Reader: fake.NewClientBuilder().WithObjects(secret(key, "uid-1", live)).Build()}
	k := &Keeper{Reader: reader, Now: func() time.Time { return t0.Add(time.Hour) }}

	got, err := k.For(ctx, key, "uid-1", names)
	require.NoError(t, err)
	assert.Equal(t, live, got, "the live certificate fits and is kept")
	got, err = k.For(ctx, key, "uid-1", names)
	require.NoError(t, err)
	assert.Equal(t, live, got)
	assert.Equal(t, 1, reader.gets, "read the first time only")

	grown, err := k.For(ctx, key, "uid-1", append(names, "llm-epp-service.ns.svc"))
	require.NoError(t, err)
	assert.NotEqual(t, live, grown, "a new name makes a new certificate")
	assert.True(t, grown.Fits(append(names, "llm-epp-service.ns.svc"), t0))
	again, err := k.For(ctx, key, "uid-1", names)
	require.NoError(t, err)
	assert.Equal(t, grown, again, "the name going away keeps the new certificate")
	assert.Equal(t, 1, reader.gets)
}

func TestKeeperIssuesWhenTheLiveSecretCannotServe(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "llm-kserve-self-signed-certs"}
	names := []string{"llm.ns.svc"}
	live, err := Issue(names, t0)
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		objects []client.Object
	}{
		{"no Secret", nil},
		{"someone else's Secret", []client.Object{secret(key, "uid-other", live)}},
		{"a Secret of a service of the same name that was deleted", []client.Object{secret(key, "uid-old", live)}},
		{"a Secret with a broken certificate", []client.Object{secret(key, "uid-1", Bundle{Key: live.Key, Cert: []byte("broken")})}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &Keeper{Reader: fake.NewClientBuilder().WithObjects(c.objects...).Build(), Now: func() time.Time { return t0 }}
			got, err := k.For(ctx, key, "uid-1", names)
			require.NoError(t, err)
			assert.NotEqual(t, live, got)
			assert.True(t, got.Fits(names, t0))
		})
	}
}

func TestKeeperRenewsNearExpiryAndReportsAReadError(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "llm-kserve-self-signed-certs"}
	names := []string{"llm.ns.svc"}
	now := t0
	k := &Keeper{Reader: fake.NewClientBuilder().Build(), Now: func() time.Time { return now }}
	first, err := k.For(ctx, key, "uid-1", names)
	require.NoError(t, err)
	now = t0.Add(Validity - RenewBefore + time.Hour)
	renewed, err := k.For(ctx, key, "uid-1", names)
	require.NoError(t, err)
	assert.NotEqual(t, first, renewed, "renewed in the window before expiry")
	assert.True(t, renewed.Fits(names, now))

	failing := &Keeper{Reader: &countingReader{err: errors.New("connection refused")}}
	_, err = failing.For(ctx, key, "uid-1", names)
	assert.ErrorContains(t, err, "connection refused")

	k.Forget(key)
	k.Reader = &countingReader{err: errors.New("read again")}
	_, err = k.For(ctx, key, "uid-1", names)
	assert.ErrorContains(t, err, "read again", "forgotten: read again")
}
