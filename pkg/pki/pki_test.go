package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIssueAndParse: a CA signs a serving certificate that covers its
// names and verifies against it; a self-signed one verifies against
// itself (a serving certificate, not a CA); both read back, a SEC 1 key too, and a key that is not the
// certificate's is refused.
func TestIssueAndParse(t *testing.T) {
	now := time.Now()
	ca, err := Issue(Template{CommonName: "test-ca", Skew: time.Hour, Validity: 24 * time.Hour, CA: true}, nil, now)
	require.NoError(t, err)
	assert.True(t, ca.Cert.IsCA)
	srv, err := Issue(Template{CommonName: "svc", DNSNames: []string{"svc.ns.svc"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Validity: time.Hour}, ca, now)
	require.NoError(t, err)
	assert.True(t, Verifies(ca.Cert, srv.Cert))
	assert.True(t, Covers(srv.Cert, []string{"svc.ns.svc"}, []net.IP{net.IPv4(127, 0, 0, 1)}))
	assert.False(t, Covers(srv.Cert, []string{"other"}, nil))
	assert.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, srv.Cert.ExtKeyUsage)

	self, err := Issue(Template{Organization: "Serval self-signed", DNSNames: []string{"localhost"}, Validity: time.Hour}, nil, now)
	require.NoError(t, err)
	assert.Equal(t, self.Cert.RawSubject, self.Cert.RawIssuer, "its own issuer")
	assert.NoError(t, self.Cert.CheckSignature(self.Cert.SignatureAlgorithm, self.Cert.RawTBSCertificate, self.Cert.Signature))
	assert.False(t, Verifies(ca.Cert, self.Cert))

	back, err := Parse(srv.CertPEM, srv.KeyPEM)
	require.NoError(t, err)
	assert.Equal(t, srv.Cert.SerialNumber, back.Cert.SerialNumber)

	sec1, err := x509.MarshalECPrivateKey(srv.Key.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	_, err = Parse(srv.CertPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}))
	require.NoError(t, err, "a key written by an earlier version")

	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(other)
	require.NoError(t, err)
	_, err = Parse(srv.CertPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	require.ErrorContains(t, err, "not the certificate's")
	_, err = Parse([]byte("x"), []byte("y"))
	require.Error(t, err)
}
