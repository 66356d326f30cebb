package apply

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Failure is an object that could not be applied.
type Failure struct {
	Object Object
	Err    error
	// Missing: the object does not exist, its create failed. A failed
	// update leaves the previous version in place, still doing its job; a
	// failed create leaves nothing.
	Missing bool
}

// The kinds of failure, as condition reasons.
const (
	// ReasonRejected: the API server refused the object as rendered (invalid,
	// a bad request, too large). The same object would be refused again;
	// only a change of what is rendered (the spec, a runtime, the config)
	// can fix it, so it is not retried until then.
	ReasonRejected = v1beta1.ReasonApplyRejected
	// ReasonForbidden: the write was forbidden, by RBAC or by an admission
	// policy. Retried with backoff: someone may fix the rights or the policy.
	ReasonForbidden = v1beta1.ReasonApplyForbidden
	// ReasonFailed: any other error (the API server or a webhook
	// unreachable, a timeout, throttling). Retried with backoff.
	ReasonFailed = v1beta1.ReasonApplyFailed
)

// Reason is the failure's kind as a condition reason.
func (f Failure) Reason() string {
	switch apierrors.ReasonForError(f.Err) {
	case metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest, metav1.StatusReasonRequestEntityTooLarge,
		metav1.StatusReasonNotAcceptable, metav1.StatusReasonUnsupportedMediaType, metav1.StatusReasonMethodNotAllowed:
		return ReasonRejected
	case metav1.StatusReasonForbidden:
		return ReasonForbidden
	}
	return ReasonFailed
}

// missingError marks the failure to create an object that does not exist.
type missingError struct{ err error }

func (e *missingError) Error() string { return e.err.Error() }
func (e *missingError) Unwrap() error { return e.err }

// Stale reports whether the write was refused because Serval read an older
// version of the object than the API server holds (409 Conflict): another
// writer came first. Not a failure to report: a retry reads the new version.
func (f Failure) Stale() bool { return apierrors.IsConflict(f.Err) }

// Permanent reports whether retrying the same object cannot help.
func (f Failure) Permanent() bool { return f.Reason() == ReasonRejected }

// Conflict returns the failure's *ConflictError, if it is one.
func (f Failure) Conflict() *ConflictError {
	var c *ConflictError
	if errors.As(f.Err, &c) {
		return c
	}
	return nil
}

// Message says what happened, with the API server's own message.
func (f Failure) Message() string {
	var status apierrors.APIStatus
	if errors.As(f.Err, &status) {
		return fmt.Sprintf("the API server refused %s: %s", f.Object, status.Status().Message)
	}
	return fmt.Sprintf("applying %s failed: %v", f.Object, f.Err)
}

// Error is the failure's Message.
func (f Failure) Error() string { return f.Message() }
