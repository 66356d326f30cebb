package servingcert

import (
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

const (
	// Validity is how long a certificate is valid, and RenewBefore how long
	// before its end it is replaced: KServe's ten years plus a fifth, renewed
	// after ten.
	Validity    = 12 * 365 * 24 * time.Hour
	RenewBefore = 2 * 365 * 24 * time.Hour
)

// Loopback is the one address a certificate covers: a sidecar in the pod
// calls the model over it.
var Loopback = net.IPv4(127, 0, 0, 1)

// Bundle is a certificate and its key, PEM-encoded as a kubernetes.io/tls
// Secret holds them. The certificate is its own CA.
type Bundle struct {
	Key, Cert []byte
}

// Issue makes a self-signed serving certificate for the DNS names, localhost
// and Loopback, valid from now for Validity.
func Issue(names []string, now time.Time) (Bundle, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Bundle{}, fmt.Errorf("generate a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return Bundle{}, fmt.Errorf("generate a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Serval self-signed"}},
		NotBefore:             now.Add(-time.Minute).UTC(), // a node whose clock is behind
		NotAfter:              now.Add(Validity).UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              withLocalhost(names),
		IPAddresses:           []net.IP{Loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Bundle{}, fmt.Errorf("create the certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Bundle{}, fmt.Errorf("encode the key: %w", err)
	}
	return Bundle{
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// Fits reports whether b can stay: it parses, its key is the certificate's,
// it covers every name and Loopback, and it is not within RenewBefore of its
// end. A certificate that covers more names than asked still fits, so a
// name that goes and comes back costs no new key.
func (b Bundle) Fits(names []string, now time.Time) bool {
	cert, err := b.parse()
	if err != nil || now.Add(RenewBefore).After(cert.NotAfter) {
		return false
	}
	for _, n := range withLocalhost(names) {
		if !slices.Contains(cert.DNSNames, n) {
			return false
		}
	}
	return slices.ContainsFunc(cert.IPAddresses, Loopback.Equal)
}

// parse reads the certificate and checks that the key is its key.
func (b Bundle) parse() (*x509.Certificate, error) {
	certBlock, _ := pem.Decode(b.Cert)
	keyBlock, _ := pem.Decode(b.Key)
	if certBlock == nil || keyBlock == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("not a private key")
	}
	if pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("the key is not the certificate's")
	}
	return cert, nil
}

func withLocalhost(names []string) []string {
	if slices.Contains(names, "localhost") {
		return names
	}
	return append([]string{"localhost"}, names...)
}
