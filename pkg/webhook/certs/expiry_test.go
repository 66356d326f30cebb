package certs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/pki"
)

// TestExpiryReadsTheServedCertificate: the metric is the NotAfter of the
// certificate in the directory, absent with no directory, no file or a file
// that holds no certificate.
func TestExpiryReadsTheServedCertificate(t *testing.T) {
	e := NewExpiry()
	assert.Zero(t, testutil.CollectAndCount(e), "no directory yet")
	dir := t.TempDir()
	e.SetDir(dir)
	assert.Zero(t, testutil.CollectAndCount(e), "no file yet")
	require.NoError(t, os.WriteFile(filepath.Join(dir, tlsCertKey), []byte("not a certificate"), 0o600))
	assert.Zero(t, testutil.CollectAndCount(e), "no certificate in the file")

	now := time.Unix(1_800_000_000, 0)
	kp, err := pki.Issue(pki.Template{CommonName: "serval-webhook", Validity: 90 * 24 * time.Hour, DNSNames: []string{"a"}}, nil, now)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, tlsCertKey), kp.CertPEM, 0o600))
	want := fmt.Sprintf(`# HELP %[1]s When the webhook serving certificate the manager serves expires, in seconds since the epoch (absent while no certificate can be read).
# TYPE %[1]s gauge
%[1]s %g
`, ExpiryMetric, float64(kp.Cert.NotAfter.Unix()))
	assert.NoError(t, testutil.CollectAndCompare(e, strings.NewReader(want)))
}
