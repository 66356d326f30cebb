// Package pki makes and reads the X.509 certificates Serval issues itself:
// the webhook's CA and serving certificate, and an LLMInferenceService's
// self-signed serving certificate. Keys are ECDSA P-256, written as PKCS #8
// ("PRIVATE KEY"); SEC 1 keys ("EC PRIVATE KEY", written by earlier
// versions) are still read.
package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// KeyPair is a certificate and its key, parsed and PEM-encoded.
type KeyPair struct {
	Cert            *x509.Certificate
	Key             crypto.Signer
	CertPEM, KeyPEM []byte
}

// Template is what a certificate says: its subject, names and validity.
type Template struct {
	// CommonName and Organization are the subject's.
	CommonName   string
	Organization string
	DNSNames     []string
	IPs          []net.IP
	// NotBefore is backdated by Skew from the issue time (a clock that is
	// behind still accepts it); NotAfter is the issue time plus Validity.
	Skew, Validity time.Duration
	// CA makes a certificate that signs others; else a serving one.
	CA bool
}

// Issue makes a key and a certificate of t, issued at now and signed by
// issuer, or by itself when issuer is nil.
func Issue(t Template, issuer *KeyPair, now time.Time) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: t.CommonName},
		DNSNames:              t.DNSNames,
		IPAddresses:           t.IPs,
		NotBefore:             now.Add(-t.Skew).UTC(),
		NotAfter:              now.Add(t.Validity).UTC(),
		BasicConstraintsValid: true,
	}
	if t.Organization != "" {
		tmpl.Subject.Organization = []string{t.Organization}
	}
	if t.CA {
		tmpl.IsCA, tmpl.KeyUsage = true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	parent, parentKey := tmpl, crypto.Signer(key)
	if issuer != nil {
		parent, parentKey = issuer.Cert, issuer.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("create the certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode the key: %w", err)
	}
	return &KeyPair{Cert: cert, Key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})}, nil
}

// Parse reads the first certificate of certPEM and its key, and checks
// that the key is the certificate's.
func Parse(certPEM, keyPEM []byte) (*KeyPair, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("no PEM data")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	var key crypto.Signer
	switch kb.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	default:
		var k any
		if k, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
			var ok bool
			if key, ok = k.(crypto.Signer); !ok {
				err = errors.New("not a private key")
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("the key is not the certificate's")
	}
	return &KeyPair{Cert: cert, Key: key, CertPEM: pem.EncodeToMemory(cb), KeyPEM: keyPEM}, nil
}

// Covers reports whether cert names every DNS name and IP.
func Covers(cert *x509.Certificate, dnsNames []string, ips []net.IP) bool {
	for _, n := range dnsNames {
		if !slices.Contains(cert.DNSNames, n) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// Verifies reports whether ca signed cert.
func Verifies(ca, cert *x509.Certificate) bool {
	return cert.CheckSignatureFrom(ca) == nil && bytes.Equal(cert.RawIssuer, ca.RawSubject)
}
