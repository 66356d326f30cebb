package servingcert

import (
	"net"
	"slices"
	"time"

	"github.com/serval-dev/serval/pkg/pki"
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
	kp, err := pki.Issue(pki.Template{Organization: "Serval self-signed", DNSNames: withLocalhost(names), IPs: []net.IP{Loopback},
		Skew: time.Minute, Validity: Validity}, nil, now) // Skew: a node whose clock is behind
	if err != nil {
		return Bundle{}, err
	}
	return Bundle{Key: kp.KeyPEM, Cert: kp.CertPEM}, nil
}

// Fits reports whether b can stay: it parses, its key is the certificate's,
// it covers every name and Loopback, and it is not within RenewBefore of its
// end. A certificate that covers more names than asked still fits, so a
// name that goes and comes back costs no new key.
func (b Bundle) Fits(names []string, now time.Time) bool {
	kp, err := pki.Parse(b.Cert, b.Key)
	if err != nil || now.Add(RenewBefore).After(kp.Cert.NotAfter) {
		return false
	}
	return pki.Covers(kp.Cert, withLocalhost(names), []net.IP{Loopback})
}

func withLocalhost(names []string) []string {
	if slices.Contains(names, "localhost") {
		return names
	}
	return append([]string{"localhost"}, names...)
}
