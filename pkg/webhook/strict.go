package webhook

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"
)

// strictErrors decodes the request's raw object strictly into into: the
// CRD keeps the pod and container subtrees schemaless (to stay small), so
// the API server cannot reject an unknown or mistyped field there; this does,
// with its path.
func strictErrors(ctx context.Context, into any) field.ErrorList {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || len(req.Object.Raw) == 0 {
		return nil
	}
	strictErrs, err := sigsjson.UnmarshalStrict(req.Object.Raw, into)
	var errs field.ErrorList
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec"), nil, "does not decode: "+cleanJSONError(err.Error())))
	}
	for _, e := range strictErrs {
		msg := e.Error()
		switch {
		case strings.HasPrefix(msg, "unknown field "):
			path := strings.Trim(strings.TrimPrefix(msg, "unknown field "), `"`)
			errs = append(errs, field.Forbidden(field.NewPath(path), "unknown field; check its spelling and indentation"))
		case strings.HasPrefix(msg, "duplicate field "):
			path := strings.Trim(strings.TrimPrefix(msg, "duplicate field "), `"`)
			errs = append(errs, field.Duplicate(field.NewPath(path), nil))
		default:
			errs = append(errs, field.Invalid(field.NewPath("spec"), nil, msg))
		}
	}
	return errs
}

func cleanJSONError(msg string) string {
	return strings.TrimPrefix(msg, "json: ")
}
