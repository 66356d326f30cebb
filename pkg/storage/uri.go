package storage

import (
	"fmt"
	"net/url"
	"strings"
)

// Kind is how a model gets into the pod.
type Kind int

const (
	// Download: the storage initializer fetches the model into an emptyDir.
	Download Kind = iota
	// PVC: the claim is mounted read-only.
	PVC
)

// Location is a parsed storage URI.
type Location struct {
	URI    string
	Scheme string
	Kind   Kind
	// Claim and SubPath are set for pvc:// URIs.
	Claim, SubPath string
}

// downloadSchemes are the schemes KServe's storage initializer fetches.
var downloadSchemes = map[string]bool{"gs": true, "s3": true, "http": true, "https": true, "hf": true}

// Parse reads a storage URI. The error says what is wrong and which schemes
// are supported.
func Parse(uri string) (Location, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" {
		return Location{}, fmt.Errorf("storageUri %q has no scheme; use gs://, s3://, http(s)://, hf:// or pvc://", uri)
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
	}
	return Location{}, fmt.Errorf("storageUri scheme %q is not supported; use gs://, s3://, http(s)://, hf:// or pvc://", scheme)
}
