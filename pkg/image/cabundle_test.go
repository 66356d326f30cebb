package image

import (
	"archive/tar"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
)

// TestCABundleVerifiesSteps builds the image with the router and a CA
// bundle that holds a test CA (added as hack/image's --extra-ca adds one),
// checks that the bundle is in the layer, and runs the router from the
// layer against an https step whose certificate that CA signed: it is
// trusted with the image's bundle and refused without the test CA.
func TestCABundleVerifiesSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries: make test runs it, make test-unit (-short) does not")
	}
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	t.Chdir(root)
	dir := t.TempDir()
	caPEM, leaf := testCA(t)
	caFile := filepath.Join(dir, "test-ca.pem")
	require.NoError(t, os.WriteFile(caFile, caPEM, 0o600))
	bundle, err := CABundle(CABundlePath, caFile)
	require.NoError(t, err)

	routerBin := filepath.Join(dir, "router-built")
	require.NoError(t, Compile("./cmd/router", routerBin, "v9.9.9-test", "abc123", runtime.GOARCH))
	img, err := Build(Options{Binaries: map[string]string{"/router": routerBin}, Entrypoint: []string{"/router"},
		Version: "v9.9.9-test", OS: "linux", Architecture: runtime.GOARCH, CABundle: bundle})
	require.NoError(t, err)
	files, _ := extract(t, img, dir, "router", CABundlePath[1:])
	inImage, err := os.ReadFile(files[CABundlePath[1:]])
	require.NoError(t, err)
	assert.Contains(t, string(inImage), string(caPEM), "the test CA is in the image's bundle")

	step := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"verified":true}`)
	}))
	step.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
	step.StartTLS()
	t.Cleanup(step.Close)

	status, body := callThroughRouter(t, files["router"], step.URL, files[CABundlePath[1:]])
	assert.Equal(t, 200, status, body)
	assert.JSONEq(t, `{"verified":true}`, body)

	status, body = callThroughRouter(t, files["router"], step.URL, CABundlePath)
	assert.Equal(t, http.StatusBadGateway, status, "a step signed by a CA the bundle lacks is refused")
	assert.Contains(t, body, "the step's TLS handshake failed")
}

// testCA returns a CA's PEM and a serving certificate for 127.0.0.1 that
// it signed.
func testCA(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "serval test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "step"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// extract writes the named files of the image's layer into dir and
// returns their paths by name, and the mode of every entry of the layer.
func extract(t *testing.T, img v1.Image, dir string, names ...string) (map[string]string, map[string]int64) {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out, modes := map[string]string{}, map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		modes[h.Name] = h.Mode
		if !want[h.Name] {
			continue
		}
		file := filepath.Join(dir, "from-image", h.Name)
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
		require.NoError(t, err)
		_, err = io.Copy(f, tr)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		out[h.Name] = file
	}
	for _, n := range names {
		require.Contains(t, out, n, "the image's layer holds %s", n)
	}
	return out, modes
}

// callThroughRouter runs the router binary over a one-step graph to step,
// trusting the CA bundle in caFile (as the image's is found at its default
// path), and returns the status and body of one request.
func callThroughRouter(t *testing.T, bin, step, caFile string) (int, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	graph := `{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"` + step + `"}]}}}`
	cmd := exec.Command(bin, "--graph-json="+graph, "--addr="+addr, "--metrics-addr=0", "--drain-delay=0s")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile, "SSL_CERT_DIR=/nonexistent")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = http.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}
