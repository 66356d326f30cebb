package v1alpha2

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The annotations of managed device allocation (KServe's experimental
// serving.kserve.io/exp-dra-*): with a device class, Serval makes a
// ResourceClaimTemplate for the service and every model pod claims a
// device from it.
const (
	// DRADeviceClassAnnotation names the DeviceClass; it turns the rest on.
	DRADeviceClassAnnotation = "serving.serval.dev/exp-dra-device-class"
	// DRADeviceCountAnnotation is how many devices each pod gets (1 when
	// unset).
	DRADeviceCountAnnotation = "serving.serval.dev/exp-dra-device-count"
	// DRACELSelectorAnnotation holds CEL expressions, one per line, that
	// a device must satisfy.
	DRACELSelectorAnnotation = "serving.serval.dev/exp-dra-cel-selector"
	// DRAContainerAnnotation names the container that uses the devices
	// (the pod's first, the model server, when unset).
	DRAContainerAnnotation = "serving.serval.dev/exp-dra-container-name"
)

// ManagedDRA is a service's managed device allocation, read from its
// annotations.
// +kubebuilder:object:generate=false
type ManagedDRA struct {
	DeviceClass string
	// Count is at least 1.
	Count int64
	// Selectors are CEL expressions.
	Selectors []string
	// Container is the container that claims the devices; "" for the
	// pod's first.
	Container string
}

// ManagedDRAOf reads the managed device allocation of a service's
// annotations: nil without a device class. Errors say which annotation is
// wrong; ValidateManagedDRA reports them at admission.
func ManagedDRAOf(annotations map[string]string) (*ManagedDRA, field.ErrorList) {
	errs := ValidateManagedDRA(annotations)
	class, ok := annotations[DRADeviceClassAnnotation]
	if !ok || len(errs) > 0 {
		return nil, errs
	}
	d := &ManagedDRA{DeviceClass: strings.TrimSpace(class), Count: 1,
		Container: strings.TrimSpace(annotations[DRAContainerAnnotation])}
	if raw := strings.TrimSpace(annotations[DRADeviceCountAnnotation]); raw != "" {
		d.Count, _ = strconv.ParseInt(raw, 10, 32)
	}
	for _, line := range strings.Split(annotations[DRACELSelectorAnnotation], "\n") {
		if expr := strings.TrimSpace(line); expr != "" {
			d.Selectors = append(d.Selectors, expr)
		}
	}
	return d, nil
}

// ValidateManagedDRA checks the managed device allocation annotations as
// KServe does: the others need a device class, which is a DNS subdomain;
// the count is a whole number of at least 1; a CEL selector holds at least
// one expression.
func ValidateManagedDRA(annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("metadata", "annotations")
	class, hasClass := annotations[DRADeviceClassAnnotation]
	count, hasCount := annotations[DRADeviceCountAnnotation]
	selectors, hasSelectors := annotations[DRACELSelectorAnnotation]
	_, hasContainer := annotations[DRAContainerAnnotation]
	if !hasClass && (hasCount || hasSelectors || hasContainer) {
		errs = append(errs, field.Required(p.Key(DRADeviceClassAnnotation), fmt.Sprintf(
			"%s is required to enable managed DRA when %s, %s, or %s is set",
			DRADeviceClassAnnotation, DRADeviceCountAnnotation, DRACELSelectorAnnotation, DRAContainerAnnotation)))
	}
	if hasClass {
		switch trimmed := strings.TrimSpace(class); {
		case trimmed == "":
			errs = append(errs, field.Invalid(p.Key(DRADeviceClassAnnotation), class, "device class must not be empty"))
		default:
			if msgs := validation.IsDNS1123Subdomain(trimmed); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Key(DRADeviceClassAnnotation), class, "device class must be a DNS subdomain: "+strings.Join(msgs, "; ")))
			}
		}
	}
	if raw := strings.TrimSpace(count); hasCount && raw != "" {
		if n, err := strconv.ParseInt(raw, 10, 32); err != nil || n < 1 {
			errs = append(errs, field.Invalid(p.Key(DRADeviceCountAnnotation), count, "the device count is a whole number of at least 1"))
		}
	}
	if hasSelectors && strings.TrimSpace(selectors) == "" {
		errs = append(errs, field.Invalid(p.Key(DRACELSelectorAnnotation), selectors, "cel selector must contain at least one non-empty CEL expression"))
	}
	return errs
}
