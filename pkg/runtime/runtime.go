package runtime

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Runtime is a ServingRuntime or ClusterServingRuntime under consideration.
type Runtime struct {
	Name string
	// Namespaced is true for a ServingRuntime, false for a ClusterServingRuntime.
	Namespaced bool
	Created    metav1.Time
	// Annotations are the runtime object's own annotations (such as its
	// server type), not the ones it adds to pods.
	Annotations map[string]string
	Spec        *v1alpha1.ServingRuntimeSpec
	// DecodeError is set when the stored runtime's spec does not decode: it
	// is never selected, and an InferenceService that uses or names it is
	// told why rather than moved to another runtime.
	DecodeError string
}

// FromServingRuntime wraps a namespaced runtime.
func FromServingRuntime(sr *v1alpha1.ServingRuntime) Runtime {
	return Runtime{Name: sr.Name, Namespaced: true, Created: sr.CreationTimestamp, Annotations: sr.Annotations, Spec: &sr.Spec, DecodeError: sr.DecodeError}
}

// FromClusterServingRuntime wraps a cluster runtime.
func FromClusterServingRuntime(csr *v1alpha1.ClusterServingRuntime) Runtime {
	return Runtime{Name: csr.Name, Created: csr.CreationTimestamp, Annotations: csr.Annotations, Spec: &csr.Spec, DecodeError: csr.DecodeError}
}

// Kind is ServingRuntime or ClusterServingRuntime.
func (r Runtime) Kind() string {
	if r.Namespaced {
		return "ServingRuntime"
	}
	return "ClusterServingRuntime"
}

// String names the runtime with its kind, for messages.
func (r Runtime) String() string { return r.Kind() + " " + r.Name }

// protocols returns the runtime's protocols; KServe reads an empty list as v1.
func (r Runtime) protocols() []v1beta1.Protocol {
	if len(r.Spec.ProtocolVersions) == 0 {
		return []v1beta1.Protocol{v1beta1.ProtocolV1}
	}
	return r.Spec.ProtocolVersions
}

func (r Runtime) supportsProtocol(p v1beta1.Protocol) bool {
	for _, q := range r.protocols() {
		if q == p {
			return true
		}
	}
	return false
}

// protocolRank orders protocols for a model with no protocolVersion when no
// runtime speaks v1: REST before gRPC, v2 before v1. Lower is better.
var protocolRank = map[v1beta1.Protocol]int{
	v1beta1.ProtocolV1: 0, v1beta1.ProtocolV2: 1, v1beta1.ProtocolGRPCV2: 2, v1beta1.ProtocolGRPCV1: 3,
}

// bestProtocol is the runtime's best-ranked protocol.
func (r Runtime) bestProtocol() v1beta1.Protocol {
	best := v1beta1.Protocol("")
	for _, p := range r.protocols() {
		if rank, ok := protocolRank[p]; ok && (best == "" || rank < protocolRank[best]) {
			best = p
		}
	}
	return best
}

// skip is why a runtime cannot serve a request. It holds its parts rather
// than a message: selection checks every runtime, and formatting a message
// for each would be most of its cost. String builds the text when needed.
type skip struct {
	kind   skipKind
	detail string
	format v1beta1.ModelFormat
}

type skipKind int

const (
	noSkip skipKind = iota
	skipFormat
	skipVersion
	skipDisabled
	skipMultiModel
	skipAutoSelectOff
	skipProtocol
	skipUndecodable
	skipMultiNode
)

func (s skip) String() string {
	switch s.kind {
	case skipFormat:
		return "does not support format " + s.format.Name
	case skipVersion:
		return "does not support version " + *s.format.Version + " of " + s.format.Name
	case skipDisabled:
		return "disabled"
	case skipMultiModel:
		return "multi-model"
	case skipAutoSelectOff:
		return "autoSelect is off for " + s.format.Name
	case skipProtocol:
		return "does not support protocol " + s.detail
	case skipUndecodable:
		return "its spec does not decode (" + s.detail + ")"
	case skipMultiNode:
		return s.detail
	}
	return ""
}

// formatEntry returns the runtime's entry for the model format, if any: same
// name and, when the model gives a version, a matching version.
func (r Runtime) formatEntry(f v1beta1.ModelFormat) (*v1alpha1.SupportedModelFormat, skip) {
	nameSeen := false
	for i := range r.Spec.SupportedModelFormats {
		entry := &r.Spec.SupportedModelFormats[i]
		if entry.Name != f.Name {
			continue
		}
		nameSeen = true
		if f.Version == nil || versionMatches(entry.Version, *f.Version) {
			return entry, skip{}
		}
	}
	if nameSeen {
		return nil, skip{kind: skipVersion, format: f}
	}
	return nil, skip{kind: skipFormat, format: f}
}

// versionMatches: a runtime version matches the model's version when equal,
// or when it is a prefix of it at a dot ("1" matches "1.2.3").
func versionMatches(runtimeVersion *string, modelVersion string) bool {
	if runtimeVersion == nil {
		return false
	}
	return *runtimeVersion == modelVersion || strings.HasPrefix(modelVersion, *runtimeVersion+".")
}

// priority of the runtime for a format entry; 0 means no priority.
func priority(entry *v1alpha1.SupportedModelFormat) int32 {
	if entry == nil || entry.Priority == nil {
		return 0
	}
	return *entry.Priority
}
