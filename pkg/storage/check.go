package storage

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// CheckURIs refuses each URI whose form the storage initializer cannot
// fetch, by its field: the check API types leave to this package.
func CheckURIs(refs []v1alpha2.URIRef) field.ErrorList {
	var errs field.ErrorList
	for _, r := range refs {
		if _, err := Parse(r.URI); err != nil {
			errs = append(errs, field.Invalid(r.Path, r.URI, err.Error()))
		}
	}
	return errs
}
