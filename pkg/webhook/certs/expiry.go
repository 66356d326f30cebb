package certs

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// ExpiryMetric is the time the webhook serving certificate expires at.
const ExpiryMetric = "serval_webhook_certificate_expiry_timestamp_seconds"

// Expiry reports ExpiryMetric from the certificate file the webhook server
// serves, read at each scrape: whoever wrote it (this manager in
// CertModeSelf, cert-manager or an administrator in CertModeExternal), the
// figure is the certificate the API server is shown.
type Expiry struct {
	desc *prometheus.Desc
	dir  atomic.Pointer[string]
}

// NewExpiry returns an Expiry that reports nothing until SetDir.
func NewExpiry() *Expiry {
	return &Expiry{desc: prometheus.NewDesc(ExpiryMetric,
		"When the webhook serving certificate the manager serves expires, in seconds since the epoch (absent while no certificate can be read).",
		nil, nil)}
}

// SetDir makes Expiry read dir's tls.crt; the last manager to set it is the
// one reported.
func (e *Expiry) SetDir(dir string) { e.dir.Store(&dir) }

// Describe implements prometheus.Collector.
func (e *Expiry) Describe(ch chan<- *prometheus.Desc) { ch <- e.desc }

// Collect implements prometheus.Collector.
func (e *Expiry) Collect(ch chan<- prometheus.Metric) {
	dir := e.dir.Load()
	if dir == nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(*dir, tlsCertKey))
	if err != nil {
		return
	}
	// The first block is the serving certificate; the rest is its chain.
	block, _ := pem.Decode(data)
	if block == nil {
		return
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(e.desc, prometheus.GaugeValue, float64(cert.NotAfter.Unix()))
}
