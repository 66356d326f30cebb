package v1alpha1

import (
	"fmt"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Conflict returns why two runtimes of one scope would make auto-selection
// ambiguous, or "": both enabled, and a model format with the same version,
// both autoSelect, with the same priority and a protocol in common. Ordering
// would then fall back to age and name, which nobody should rely on.
func Conflict(a, b *ServingRuntimeSpec) string {
	if a.IsDisabled() || b.IsDisabled() || a.IsMultiModel() || b.IsMultiModel() {
		return ""
	}
	for _, fa := range a.SupportedModelFormats {
		for _, fb := range b.SupportedModelFormats {
			if fa.Name != fb.Name || deref(fa.Version) != deref(fb.Version) || !autoSelect(fa) || !autoSelect(fb) ||
				priorityOf(fa) != priorityOf(fb) {
				continue
			}
			if p := commonProtocol(a, b); p != "" {
				return fmt.Sprintf("both auto-select model format %s%s with priority %d over protocol %s",
					fa.Name, versionSuffix(fa.Version), priorityOf(fa), p)
			}
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func autoSelect(f SupportedModelFormat) bool { return f.AutoSelect != nil && *f.AutoSelect }

func priorityOf(f SupportedModelFormat) int32 {
	if f.Priority == nil {
		return 0
	}
	return *f.Priority
}

func versionSuffix(v *string) string {
	if v == nil {
		return ""
	}
	return " version " + *v
}

// protocolsOf reads an empty list as v1, as selection does.
func protocolsOf(s *ServingRuntimeSpec) []v1beta1.Protocol {
	if len(s.ProtocolVersions) == 0 {
		return []v1beta1.Protocol{v1beta1.ProtocolV1}
	}
	return s.ProtocolVersions
}

func commonProtocol(a, b *ServingRuntimeSpec) v1beta1.Protocol {
	for _, pa := range protocolsOf(a) {
		for _, pb := range protocolsOf(b) {
			if pa == pb {
				return pa
			}
		}
	}
	return ""
}
