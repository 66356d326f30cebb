// Package image builds Serval's container image without a container
// engine: the static Go binaries in one layer on an empty base, with a
// non-root user, as an OCI image that `docker load`, `crane push` and
// `skopeo copy` accept. `make image` runs it (hack/image).
package image

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group the image runs as: the "nonroot" user of
// distroless images, which restricted pod security admits.
const NonRoot = 65532

// Options says what goes into the image.
type Options struct {
	// Binaries maps a path in the image (/manager) to a static binary on
	// disk. Every binary the chart runs belongs here: one image, several
	// entrypoints.
	Binaries map[string]string
	// Entrypoint is the image's default command, such as ["/manager"].
	Entrypoint []string
	// Version and Revision are stamped into the labels.
	Version, Revision string
	// OS and Architecture of the binaries (linux, amd64).
	OS, Architecture string
	// CABundle is the PEM bundle of the certificate authorities the
	// binaries trust, at CABundlePath in the image: the router verifies
	// https steps with it. Build it with CABundle.
	CABundle []byte
	// Created is the image's creation time; the zero time keeps the image
	// reproducible (the same binaries give the same digest).
	Created time.Time
}

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	layer, err := filesLayer(o.Binaries, o.CABundle)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{CreatedBy: "serval hack/image", Created: v1.Time{Time: o.Created}}})
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = o.OS, o.Architecture
	cfg.Created = v1.Time{Time: o.Created}
	cfg.Config.User = fmt.Sprintf("%d:%d", NonRoot, NonRoot)
	cfg.Config.Entrypoint = o.Entrypoint
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/"}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    "serval",
		"org.opencontainers.image.source":   "https://github.com/serval-dev/serval",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Revision,
	}
	return mutate.ConfigFile(img, cfg)
}

// WriteTarball writes img as a tarball that `docker load` reads, tagged ref
// (such as ghcr.io/serval-dev/serval-manager:v0.2.0).
func WriteTarball(img v1.Image, ref, file string) error {
	tag, err := parseTag(ref)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(file, tag, img)
}

// filesLayer is one uncompressed-then-gzipped layer with /tmp (the only
// writable place a read-only root needs: mounted over in the chart), the
// passwd and group entries of the non-root user, and the binaries, all with
// fixed times so the layer is reproducible, and the CA bundle.
func filesLayer(binaries map[string]string, caBundle []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, ModTime: time.Unix(0, 0)})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := dir("tmp/", 0o1777); err != nil {
		return nil, err
	}
	if err := dir("etc/", 0o755); err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot)
	if err := file("etc/passwd", 0o644, []byte(passwd)); err != nil {
		return nil, err
	}
	if err := file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRoot))); err != nil {
		return nil, err
	}
	if len(caBundle) > 0 {
		for _, d := range []string{"etc/ssl/", "etc/ssl/certs/"} {
			if err := dir(d, 0o755); err != nil {
				return nil, err
			}
		}
		if err := file(CABundlePath[1:], 0o644, caBundle); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(binaries))
	for name := range binaries {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(binaries[name])
		if err != nil {
			return nil, err
		}
		if err := file(path.Clean(name)[1:], 0o755, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// WriteLayout writes img as an OCI image layout in dir (`crane push
// --image-refs`, `skopeo copy oci:DIR`), annotated with ref as its name.
func WriteLayout(img v1.Image, ref, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}

// CABundlePath is where the image keeps its CA bundle: the first place Go's
// crypto/x509 looks on Linux, and Debian's.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// CABundle reads the PEM bundle at system (the build machine's, from
// Debian's ca-certificates) and appends the PEM files extra, a platform's
// own CAs. It fails when a file holds no certificate, so that an image is
// never built that trusts nothing.
func CABundle(system string, extra ...string) ([]byte, error) {
	var bundle []byte
	for _, f := range append([]string{system}, extra...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read the CA bundle: %w (Debian's ca-certificates package provides %s)", err, CABundlePath)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s holds no PEM certificate", f)
		}
		bundle = append(bundle, data...)
		if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
			bundle = append(bundle, '\n')
		}
	}
	return bundle, nil
}
