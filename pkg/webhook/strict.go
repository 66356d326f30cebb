package webhook

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// decodable is an API object whose UnmarshalJSON tolerates a spec that does
// not decode (see package tolerant).
type decodable interface {
	// SpecDecodeError says why the spec did not decode, or "".
	SpecDecodeError() string
	// StrictTarget is what strict decoding decodes into.
	StrictTarget() any
}

// strictErrors reports a spec that does not decode, or else decodes the
// request's raw object strictly: the CRD keeps most of the pod and container
// subtrees schemaless (to stay small), so the API server cannot reject an
// unknown or mistyped field there; this does, with its path.
func strictErrors[T any, PT interface {
	*T
	decodable
}](ctx context.Context, obj PT) field.ErrorList {
	if msg := obj.SpecDecodeError(); msg != "" {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValueType{}, "does not decode: "+msg)}
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil || len(req.Object.Raw) == 0 {
		return nil
	}
	var fresh T
	return strictDecodeErrors(req.Object.Raw, PT(&fresh).StrictTarget())
}

// strictDecodeErrors decodes raw strictly into target and names each field
// that is unknown, repeated or mistyped.
func strictDecodeErrors(raw []byte, target any) field.ErrorList {
	strictErrs, err := sigsjson.UnmarshalStrict(raw, target)
	var errs field.ErrorList
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec"), nil, "does not decode: "+tolerant.Explain(err)))
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
