package v1alpha1

import (
	"fmt"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Conflict returns why two runtimes of one scope would make auto-selection
// ambiguous, or "". It judges as KServe's runtime webhook does: a conflict
// only when both runtimes auto-select a model format of the same name and
// version (both unset, or equal), both set a priority and it is the same,
// and their declared protocolVersions share one. Disabled and multi-model
// runtimes never conflict (Serval never selects them).
func Conflict(a, b *ServingRuntimeSpec) string {
	if a.IsDisabled() || b.IsDisabled() || a.IsMultiModel() || b.IsMultiModel() {
		return ""
	}
	for _, fa := range a.SupportedModelFormats {
		for _, fb := range b.SupportedModelFormats {
			if fa.Name != fb.Name || !sameVersion(fa.Version, fb.Version) || !autoSelect(fa) || !autoSelect(fb) ||
				fa.Priority == nil || fb.Priority == nil || *fa.Priority != *fb.Priority {
				continue
			}
			if p := commonProtocol(a, b); p != "" {
				return fmt.Sprintf("both auto-select model format %s%s with priority %d over protocol %s",
					fa.Name, versionSuffix(fa.Version), *fa.Priority, p)
			}
		}
	}
	return ""
}

func sameVersion(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func autoSelect(f SupportedModelFormat) bool { return f.AutoSelect != nil && *f.AutoSelect }

func versionSuffix(v *string) string {
	if v == nil {
		return ""
	}
	return " version " + *v
}

// commonProtocol is a protocol both runtimes declare. As in KServe's
// webhook, only the declared lists count: a runtime that declares none
// shares none (selection reads it as v1, but it is not judged a conflict).
func commonProtocol(a, b *ServingRuntimeSpec) v1beta1.Protocol {
	for _, pa := range a.ProtocolVersions {
		for _, pb := range b.ProtocolVersions {
			if pa == pb {
				return pa
			}
		}
	}
	return ""
}
