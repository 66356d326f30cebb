package image

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
)

// TestImage builds the image from the real manager binary and checks what a
// cluster and a registry see: the config (non-root user, entrypoint,
// labels), both output formats, and that the binary in the layer runs.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries: make test runs it, make test-unit (-short) does not")
	}
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	t.Chdir(root)
	dir := t.TempDir()
	manager := filepath.Join(dir, "manager")
	require.NoError(t, Compile("./cmd/manager", manager, "v9.9.9-test", "abc123", runtime.GOARCH))
	img, err := Build(Options{Binaries: map[string]string{"/manager": manager}, Entrypoint: []string{"/manager"},
		Version: "v9.9.9-test", Revision: "abc123", OS: "linux", Architecture: runtime.GOARCH})
	require.NoError(t, err)

	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cfg.Config.User, "runs as non-root")
	assert.Equal(t, []string{"/manager"}, cfg.Config.Entrypoint)
	assert.Equal(t, "v9.9.9-test", cfg.Config.Labels["org.opencontainers.image.version"])
	assert.Equal(t, "abc123", cfg.Config.Labels["org.opencontainers.image.revision"])
	assert.Equal(t, "linux", cfg.OS)

	again, err := Build(Options{Binaries: map[string]string{"/manager": manager}, Entrypoint: []string{"/manager"},
		Version: "v9.9.9-test", Revision: "abc123", OS: "linux", Architecture: runtime.GOARCH})
	require.NoError(t, err)
	d1, err := img.Digest()
	require.NoError(t, err)
	d2, err := again.Digest()
	require.NoError(t, err)
	assert.Equal(t, d1, d2, "the same binaries give the same image")

	ref := "example.com/serval-manager:v9.9.9-test"
	require.NoError(t, WriteTarball(img, ref, filepath.Join(dir, "image.tar")))
	loaded, err := tarball.ImageFromPath(filepath.Join(dir, "image.tar"), nil)
	require.NoError(t, err, "the tarball is what docker load reads")
	// docker load's format has its own manifest; the config is the same.
	loadedConfig, err := loaded.ConfigName()
	require.NoError(t, err)
	config, err := img.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, config, loadedConfig)

	require.NoError(t, WriteLayout(img, ref, filepath.Join(dir, "oci")))
	index, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	require.NoError(t, err)
	manifest, err := index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, 1)
	assert.Equal(t, ref, manifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"])

	// The binary, as the image holds it, runs and knows its version.
	files, found := extract(t, img, dir, "manager")
	extracted := files["manager"]
	assert.Equal(t, int64(0o1777), found["tmp/"], "a writable /tmp")
	assert.Contains(t, found, "etc/passwd")
	out, err := exec.Command(extracted, "--version").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "v9.9.9-test (commit abc123)")
}
