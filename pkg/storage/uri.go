package storage

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/distribution/reference"
)

// Kind is how a model gets into the pod.
type Kind int

const (
	// Download: the storage initializer fetches the model into an emptyDir.
	Download Kind = iota
	// PVC: the claim is mounted read-only.
	PVC
	// OCI: the model is an image (oci://, oci+native://, oci+fetch://);
	// Location.OCIMode says how it gets into the pod.
	OCI
)

// The ways an OCI model image gets into the pod.
const (
	// OCIModelcar runs the image as a sidecar whose /models the model
	// server reaches through the shared process namespace (KServe's
	// modelcar). No copy; the image is pulled once per node.
	OCIModelcar = "modelcar"
	// OCINative mounts the image as a Kubernetes image volume (Kubernetes
	// 1.31+, with the ImageVolume feature gate; GA in 1.36).
	OCINative = "native"
	// OCIFetch has the storage initializer copy the image's files.
	OCIFetch = "fetch"
)

// supportedSchemes is the list error messages give.
const supportedSchemes = "gs://, s3://, http(s)://, hf://, pvc:// or oci:// (oci+native://, oci+fetch://)"

// Location is a parsed storage URI.
type Location struct {
	URI    string
	Scheme string
	Kind   Kind
	// Claim and SubPath are set for pvc:// URIs.
	Claim, SubPath string
	// Image and OCIMode are set for OCI URIs: the image reference, and the
	// mode the scheme asks for ("" for oci://: serval-config decides).
	Image, OCIMode string
}

// downloadSchemes are the schemes KServe's storage initializer fetches.
var downloadSchemes = map[string]bool{"gs": true, "s3": true, "http": true, "https": true, "hf": true}

// Parse reads a storage URI. The error says what is wrong and which schemes
// are supported.
func Parse(uri string) (Location, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" {
		return Location{}, fmt.Errorf("storageUri %q has no scheme; use %s", uri, supportedSchemes)
	}
	scheme = strings.ToLower(scheme)
	loc := Location{URI: uri, Scheme: scheme}
	switch {
	case scheme == "pvc":
		claim, path, _ := strings.Cut(rest, "/")
		if claim == "" {
			return Location{}, fmt.Errorf("storageUri %q names no claim; use pvc://{claim}/{path}", uri)
		}
		loc.Kind, loc.Claim, loc.SubPath = PVC, claim, strings.Trim(path, "/")
		return loc, nil
	case downloadSchemes[scheme]:
		host, _, _ := strings.Cut(rest, "/")
		if host == "" {
			return Location{}, fmt.Errorf("storageUri %q names no bucket, host or repository after %s://", uri, scheme)
		}
		if scheme == "http" || scheme == "https" {
			if _, err := url.ParseRequestURI(uri); err != nil {
				return Location{}, fmt.Errorf("storageUri %q is not a valid URL: %v", uri, err)
			}
		}
		loc.Kind = Download
		return loc, nil
	case scheme == "oci" || scheme == "oci+native" || scheme == "oci+fetch":
		if err := checkImage(rest); err != nil {
			return Location{}, fmt.Errorf("storageUri %q does not name an image (%v); use %s://{registry}/{repository}:{tag} or @{digest}", uri, err, scheme)
		}
		loc.Kind, loc.Image = OCI, rest
		if mode, ok := strings.CutPrefix(scheme, "oci+"); ok {
			loc.OCIMode = mode
		}
		return loc, nil
	}
	return Location{}, &SchemeError{Scheme: scheme}
}

// SchemeError is a storage URI whose scheme Serval does not know.
type SchemeError struct{ Scheme string }

// Error names the scheme and the supported ones.
func (e *SchemeError) Error() string {
	return fmt.Sprintf("storageUri scheme %q is not supported; use %s", e.Scheme, supportedSchemes)
}

// checkImage parses ref with the reference grammar of the distribution
// project, which containerd and the kubelet use: a registry, a repository
// of lowercase path components, then an optional :tag or @digest.
func checkImage(ref string) error {
	if ref == "" {
		return errors.New("no image is named")
	}
	_, err := reference.ParseNormalizedNamed(ref)
	return err
}
