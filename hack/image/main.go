// Command image builds Serval's container image without a container engine
// (make image): it cross-compiles the static binaries the chart runs and
// writes the image as an OCI layout and as a tarball for `docker load`.
//
//	go run ./hack/image --version v0.2.0 --out bin/image
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/serval-dev/serval/pkg/image"
)

func main() {
	version := flag.String("version", "dev", "the version stamped into the binaries and the labels")
	repo := flag.String("repository", "ghcr.io/serval-dev/serval-manager", "the image's repository; the tag is the version")
	out := flag.String("out", "bin/image", "the directory for the OCI layout (oci/) and the tarball (serval-manager.tar)")
	arch := flag.String("arch", "amd64", "the architecture to build for")
	caBundle := flag.String("ca-bundle", image.CABundlePath, "the PEM bundle of trusted CAs copied into the image (the router verifies https steps with it)")
	var extraCAs []string
	flag.Func("extra-ca", "a PEM file of a CA the image trusts besides the bundle (repeatable)", func(f string) error {
		extraCAs = append(extraCAs, f)
		return nil
	})
	flag.Parse()
	bundle, err := image.CABundle(*caBundle, extraCAs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	if err := run(*version, *repo, *out, *arch, bundle); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(version, repo, out, arch string, caBundle []byte) error {
	revision, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	opts := image.Options{
		Binaries: map[string]string{}, Entrypoint: []string{"/manager"},
		Version: version, Revision: strings.TrimSpace(string(revision)), OS: "linux", Architecture: arch,
		CABundle: caBundle,
	}
	binDir := filepath.Join(out, "linux_"+arch)
	for inImage, pkg := range image.Binaries {
		file := filepath.Join(binDir, filepath.Base(inImage))
		if err := image.Compile(pkg, file, version, opts.Revision, arch); err != nil {
			return err
		}
		opts.Binaries[inImage] = file
	}
	img, err := image.Build(opts)
	if err != nil {
		return err
	}
	ref := repo + ":" + version
	if err := image.WriteLayout(img, ref, filepath.Join(out, "oci")); err != nil {
		return err
	}
	if err := image.WriteTarball(img, ref, filepath.Join(out, "serval-manager.tar")); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("built %s (%s)\n  OCI layout: %s\n  docker load -i %s\n", ref, digest, filepath.Join(out, "oci"), filepath.Join(out, "serval-manager.tar"))
	return nil
}
