package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/pki"
)

func testManager(now *time.Time) *Manager {
	m := &Manager{DNSNames: []string{"svc.ns.svc", "localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		CAValidity: 100 * 24 * time.Hour, CertValidity: 40 * 24 * time.Hour, RenewBefore: 10 * 24 * time.Hour,
		Now: func() time.Time { return *now }}
	m.defaults()
	return m
}

func certsIn(t *testing.T, bundle []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for rest := bundle; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		require.NoError(t, err)
		out = append(out, c)
	}
}

func TestDesired(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := testManager(&now)

	first, changed, err := m.desired(nil, nil, false, false)
	require.NoError(t, err)
	require.True(t, changed, "nothing stored: create")
	serving := certsIn(t, first[tlsCertKey])[0]
	assert.ElementsMatch(t, []string{"svc.ns.svc", "localhost"}, serving.DNSNames)
	assert.True(t, serving.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")))

	again, changed, err := m.desired(first, nil, false, false)
	require.NoError(t, err)
	assert.False(t, changed, "a valid certificate is reused (a restart)")
	assert.Equal(t, first, again)

	now = now.Add(31 * 24 * time.Hour) // the serving certificate expires within RenewBefore
	renewed, changed, err := m.desired(first, nil, false, false)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.False(t, bytes.Equal(first[tlsCertKey], renewed[tlsCertKey]), "a new serving certificate")
	assert.Equal(t, first[caCertKey], renewed[caCertKey], "signed by the same CA")

	m.DNSNames = append(m.DNSNames, "other.ns.svc")
	withName, changed, err := m.desired(renewed, nil, false, false)
	require.NoError(t, err)
	assert.True(t, changed, "a missing name renews the certificate")
	assert.Contains(t, certsIn(t, withName[tlsCertKey])[0].DNSNames, "other.ns.svc")

	now = now.Add(60 * 24 * time.Hour) // the CA expires within RenewBefore
	rolled, changed, err := m.desired(withName, nil, false, false)
	require.NoError(t, err)
	assert.True(t, changed)
	cas := certsIn(t, rolled[caCertKey])
	require.Len(t, cas, 2, "the new CA, then the old one, while old certificates may be in use")
	assert.True(t, pki.Verifies(cas[0], certsIn(t, rolled[tlsCertKey])[0]), "the new serving certificate is signed by the new CA")
	assert.Equal(t, certsIn(t, withName[caCertKey])[0].Raw, cas[1].Raw)

	now = now.Add(95 * 24 * time.Hour) // the first CA has expired, the second expires within RenewBefore
	again, changed, err = m.desired(rolled, nil, false, false)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Len(t, certsIn(t, again[caCertKey]), 2, "expired CAs leave the bundle, so it does not grow")
}

func TestDesiredReplacesGarbage(t *testing.T) {
	now := time.Now()
	data, changed, err := testManager(&now).desired(map[string][]byte{caCertKey: []byte("junk"), tlsCertKey: []byte("junk")}, nil, false, false)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotEmpty(t, certsIn(t, data[tlsCertKey]))
}

// TestDesiredKeepsTheInjectedCAs: with the Secret gone, a new CA joins the
// CAs the webhook configurations trust now, so that replicas still serving
// certificates of those stay trusted; each CA once, expired ones dropped.
func TestDesiredKeepsTheInjectedCAs(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := testManager(&now)
	before, _, err := m.desired(nil, nil, false, false)
	require.NoError(t, err)
	injected := before[caCertKey]
	after, changed, err := m.desired(nil, mergeBundles(injected, injected), false, false)
	require.NoError(t, err)
	assert.True(t, changed)
	cas := certsIn(t, after[caCertKey])
	require.Len(t, cas, 2, "the new CA and the injected one, once")
	assert.Equal(t, certsIn(t, injected)[0].Raw, cas[1].Raw)
	served := certsIn(t, before[tlsCertKey])[0]
	assert.True(t, trustedBy(after[caCertKey], served), "a replica still serving the old certificate is trusted")
	assert.True(t, trustedBy(after[caCertKey], certsIn(t, after[tlsCertKey])[0]))

	now = now.Add(200 * 24 * time.Hour) // past the injected CA's 100 days
	later, _, err := m.desired(nil, injected, false, false)
	require.NoError(t, err)
	assert.Len(t, certsIn(t, later[caCertKey]), 1, "an expired CA is not kept")
}

// TestBundleStaysBoundedWhenTheSecretIsDeletedAgainAndAgain: each deletion
// of the Secret makes a new CA that joins the injected bundle, but only
// the newest earlier CAs stay: the bundle never holds more than
// 1+maxOldCAs, and the CA a replica read last is among them.
func TestBundleStaysBoundedWhenTheSecretIsDeletedAgainAndAgain(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := testManager(&now)
	var injected []byte
	var previous *x509.Certificate
	for i := range 10 {
		now = now.Add(time.Hour)
		data, _, err := m.desired(nil, injected, false, false)
		require.NoError(t, err)
		injected = data[caCertKey]
		cas := certsIn(t, injected)
		assert.LessOrEqual(t, len(cas), 1+maxOldCAs, "deletion %d", i)
		if previous != nil {
			assert.True(t, slicesContainsCert(cas, previous), "the CA before is still trusted")
		}
		previous = cas[0]
	}
}

func slicesContainsCert(cas []*x509.Certificate, c *x509.Certificate) bool {
	for _, ca := range cas {
		if bytes.Equal(ca.Raw, c.Raw) {
			return true
		}
	}
	return false
}

// TestPairFileNeverMismatches: while serving certificates are rotated
// again and again, what GetCertificate serves (the pair file, read in one
// read) is always a certificate and the key that matches it; tls.crt and
// tls.key, two renames and two reads, can be read mismatched between them.
func TestPairFileNeverMismatches(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := testManager(&now)
	m.CertDir = t.TempDir()
	data, _, err := m.desired(nil, nil, false, false)
	require.NoError(t, err)
	require.NoError(t, m.writeFiles(data))
	stop := make(chan struct{})
	failures := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := m.GetCertificate(nil); err != nil {
				select {
				case failures <- err:
				default:
				}
			}
		}
	})
	for range 30 {
		data, _, err = m.desired(data, nil, true, false)
		require.NoError(t, err)
		require.NoError(t, m.writeFiles(data))
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-failures:
		t.Fatalf("the pair file was read mismatched: %v", err)
	default:
	}
	served, err := m.GetCertificate(nil)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(served.Certificate[0])
	require.NoError(t, err)
	assert.Equal(t, certsIn(t, data[tlsCertKey])[0].SerialNumber, leaf.SerialNumber, "the last rotation is served")
}
