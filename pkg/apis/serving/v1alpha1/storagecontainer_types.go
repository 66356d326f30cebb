package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterStorageContainer is a storage initializer for the storage URIs it
// lists (KServe's API): a model whose URI it supports is downloaded by its
// container instead of the configured storage initializer.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterstoragecontainers,scope=Cluster,categories=serval
// +kubebuilder:printcolumn:name="Disabled",type="boolean",JSONPath=".disabled"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.container.image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterStorageContainer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec StorageContainerSpec `json:"spec,omitempty"`
	// Disabled takes it out of use: no URI matches it, and naming it is an
	// error.
	// +optional
	Disabled *bool `json:"disabled,omitempty"`
}

// ClusterStorageContainerList is a list of ClusterStorageContainers.
//
// +kubebuilder:object:root=true
type ClusterStorageContainerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStorageContainer `json:"items"`
}

// StorageContainerSpec is the container and the URIs it downloads.
type StorageContainerSpec struct {
	// Container is merged over the storage initializer, as a strategic
	// merge patch: its image, arguments, env, resources and mounts.
	Container corev1.Container `json:"container"`
	// SupportedURIFormats are the URIs it downloads: each a prefix or a
	// regular expression.
	// +kubebuilder:validation:MinItems=1
	SupportedURIFormats []SupportedURIFormat `json:"supportedUriFormats"`
	// WorkloadType is where the container runs: initContainer (in the
	// model's pods), or localModelDownloadJob (in the download Jobs of the
	// model caches, never in a model's pods).
	// +kubebuilder:default=initContainer
	// +kubebuilder:validation:Enum=initContainer;localModelDownloadJob
	// +optional
	WorkloadType WorkloadType `json:"workloadType,omitempty"`
	// SupportsMultiModelDownload says the container downloads several
	// models (storageUris) in one run; kept for KServe compatibility.
	// +kubebuilder:default=false
	// +optional
	SupportsMultiModelDownload *bool `json:"supportsMultiModelDownload,omitempty"`
}

// SupportedURIFormat is a prefix or a regular expression a URI matches.
// +kubebuilder:validation:XValidation:rule="has(self.prefix) != has(self.regex)",message="set exactly one of prefix and regex"
type SupportedURIFormat struct {
	// Prefix matches URIs that start with it, such as "modelscope://".
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// Regex matches URIs it matches anywhere (Go's regexp syntax, RE2); anchor
	// it with ^ to match from the start.
	// +optional
	Regex string `json:"regex,omitempty"`
}

// WorkloadType is where a storage container runs.
type WorkloadType string

// The workload types.
const (
	InitContainer         WorkloadType = "initContainer"
	LocalModelDownloadJob WorkloadType = "localModelDownloadJob"
)

// IsDisabled reports whether the container is out of use.
func (c *ClusterStorageContainer) IsDisabled() bool {
	return c.Disabled != nil && *c.Disabled
}

// RunsAsInitContainer reports whether it runs in the model's pods: its
// workload type is initContainer (the default).
func (c *ClusterStorageContainer) RunsAsInitContainer() bool {
	return c.Spec.WorkloadType == "" || c.Spec.WorkloadType == InitContainer
}

// Supports reports whether uri matches one of its formats, as KServe
// matches them: a prefix, else a regular expression matched anywhere in
// the URI. A regular expression that does not compile is an error that
// names it.
func (s *StorageContainerSpec) Supports(uri string) (bool, error) {
	for i, f := range s.SupportedURIFormats {
		switch {
		case f.Prefix != "":
			if strings.HasPrefix(uri, f.Prefix) {
				return true, nil
			}
		case f.Regex != "":
			re, err := regexp.Compile(f.Regex)
			if err != nil {
				return false, fmt.Errorf("supportedUriFormats[%d].regex %q does not compile: %v", i, f.Regex, err)
			}
			if re.MatchString(uri) {
				return true, nil
			}
		}
	}
	return false, nil
}

func init() {
	SchemeBuilder.Register(&ClusterStorageContainer{}, &ClusterStorageContainerList{})
}
