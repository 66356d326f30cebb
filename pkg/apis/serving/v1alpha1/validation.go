package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSpec checks one runtime's spec on its own: at least one container,
// named formats, priorities of at least 1 and one priority per format, and no
// ModelMesh fields. Conflicts with other runtimes are checked by Conflict.
func ValidateSpec(spec *ServingRuntimeSpec) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a runtime needs at least one container; the first is the model server"))
	}
	for i, c := range spec.Containers {
		if c.Name == "" {
			errs = append(errs, field.Required(path.Child("containers").Index(i).Child("name"), "every container needs a name"))
		}
	}
	priorities := map[string]int32{}
	for i, f := range spec.SupportedModelFormats {
		p := path.Child("supportedModelFormats").Index(i)
		if f.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "a model format needs a name"))
			continue
		}
		if f.Priority == nil {
			continue
		}
		if *f.Priority < 1 {
			errs = append(errs, field.Invalid(p.Child("priority"), *f.Priority, "must be at least 1 when set"))
		}
		if prev, seen := priorities[f.Name]; seen && prev != *f.Priority {
			errs = append(errs, field.Invalid(p.Child("priority"), *f.Priority,
				fmt.Sprintf("model format %s already has priority %d in this runtime; one format takes one priority", f.Name, prev)))
		}
		priorities[f.Name] = *f.Priority
	}
	for _, mm := range []struct {
		name string
		set  bool
	}{
		{"grpcEndpoint", spec.GrpcMultiModelManagementEndpoint != nil},
		{"grpcDataEndpoint", spec.GrpcDataEndpoint != nil},
		{"httpDataEndpoint", spec.HTTPDataEndpoint != nil},
		{"replicas", spec.Replicas != nil},
		{"storageHelper", spec.StorageHelper != nil},
		{"builtInAdapter", spec.BuiltInAdapter != nil},
	} {
		if mm.set {
			errs = append(errs, field.Forbidden(path.Child(mm.name), "spec."+mm.name+" is not supported by Serval yet"))
		}
	}
	return append(errs, validateWorkerSpec(spec, path)...)
}
