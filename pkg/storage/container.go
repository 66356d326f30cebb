package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// SelectContainer picks the ClusterStorageContainer that downloads uri,
// as KServe picks it: the one named (which must exist, be enabled, run as
// an init container and support the URI), or else the first, in name
// order, that is enabled, runs as an init container and supports it. nil
// when none does: the configured storage initializer downloads it.
func SelectContainer(uri, name string, all []v1alpha1.ClusterStorageContainer) (*v1alpha1.ClusterStorageContainer, error) {
	if name != "" {
		return namedContainer(uri, name, all)
	}
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, func(a, b v1alpha1.ClusterStorageContainer) int { return strings.Compare(a.Name, b.Name) })
	for i := range sorted {
		sc := &sorted[i]
		if sc.IsDisabled() || !sc.RunsAsInitContainer() {
			continue
		}
		ok, err := sc.Spec.Supports(uri)
		if err != nil {
			return nil, fmt.Errorf("ClusterStorageContainer %s: %w", sc.Name, err)
		}
		if ok {
			return sc, nil
		}
	}
	return nil, nil
}

func namedContainer(uri, name string, all []v1alpha1.ClusterStorageContainer) (*v1alpha1.ClusterStorageContainer, error) {
	i := slices.IndexFunc(all, func(sc v1alpha1.ClusterStorageContainer) bool { return sc.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("storageContainerName names the ClusterStorageContainer %q, which does not exist; create it or remove storageContainerName", name)
	}
	sc := &all[i]
	switch ok, err := sc.Spec.Supports(uri); {
	case sc.IsDisabled():
		return nil, fmt.Errorf("the ClusterStorageContainer %q is disabled", name)
	case !sc.RunsAsInitContainer():
		return nil, fmt.Errorf("the ClusterStorageContainer %q has workloadType %q; a model's storage container needs %q", name, sc.Spec.WorkloadType, v1alpha1.InitContainer)
	case err != nil:
		return nil, fmt.Errorf("ClusterStorageContainer %s: %w", name, err)
	case !ok:
		return nil, fmt.Errorf("the ClusterStorageContainer %q does not support the storage URI %q (none of its supportedUriFormats matches)", name, uri)
	}
	return sc, nil
}

// ParseWith reads a storage URI as Parse does, and accepts as a download
// one whose scheme Serval does not know when a storage container
// supports it (custom says so): that container downloads it.
func ParseWith(uri string, custom bool) (Location, error) {
	loc, err := Parse(uri)
	var schemeErr *SchemeError
	if err == nil || !errors.As(err, &schemeErr) {
		return loc, err
	}
	if !custom {
		return loc, fmt.Errorf("%w, or add a ClusterStorageContainer whose supportedUriFormats match it", err)
	}
	scheme, _, _ := strings.Cut(uri, "://")
	return Location{URI: uri, Scheme: strings.ToLower(scheme), Kind: Download}, nil
}

// UseContainer merges a ClusterStorageContainer's container over the
// plan's storage initializer as a strategic merge patch, as KServe merges
// it: lists of named items (env, volumeMounts, ports) merge by name, the
// rest is replaced where the patch sets it. A plan without an initializer
// (a claim, a modelcar) is left as it is.
func (p *Plan) UseContainer(patch corev1.Container) error {
	if p.InitContainer == nil {
		return nil
	}
	return mergeContainer(p.InitContainer, patch)
}

func mergeContainer(c *corev1.Container, patch corev1.Container) error {
	patch.Name = c.Name
	orig, err := json.Marshal(c)
	if err != nil {
		return err
	}
	p, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, p, corev1.Container{})
	if err != nil {
		return fmt.Errorf("merge the storage container: %w", err)
	}
	out := corev1.Container{}
	if err := json.Unmarshal(merged, &out); err != nil {
		return err
	}
	*c = out
	return nil
}
