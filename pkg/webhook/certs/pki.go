package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"slices"
	"time"
)

// keyPair is a certificate and its key, parsed and PEM-encoded.
type keyPair struct {
	cert            *x509.Certificate
	certPEM, keyPEM []byte
	key             *ecdsa.PrivateKey
}

// newKeyAndSerial makes a P-256 key and a random 127-bit serial number.
func newKeyAndSerial() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return key, serial, err
}

// newCA creates a self-signed CA valid from now for validity.
func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "serval-webhook-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return sign(tmpl, tmpl, key, key)
}

// newServing creates a serving certificate for the names, signed by ca.
func newServing(ca *keyPair, dnsNames []string, ips []net.IP, now time.Time, validity time.Duration) (*keyPair, error) {
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return sign(tmpl, ca.cert, key, ca.key)
}

func sign(tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// parseKeyPair reads the first certificate of certPEM and its key.
func parseKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("no PEM data")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: pem.EncodeToMemory(cb), keyPEM: keyPEM}, nil
}

// covers reports whether the certificate names every DNS name and IP.
func covers(cert *x509.Certificate, dnsNames []string, ips []net.IP) bool {
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

// verifies reports whether ca signed cert.
func verifies(ca, cert *x509.Certificate) bool {
	return cert.CheckSignatureFrom(ca) == nil && bytes.Equal(cert.RawIssuer, ca.RawSubject)
}
