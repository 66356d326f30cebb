// Package v1beta1 holds the InferenceService API of serving.serval.dev: the
// types (field-compatible with KServe's v1beta1), their pure defaulting and
// validation. The admission webhooks and the reconciler both call Default and
// Validate, so an object that never passed the webhook is handled the same way.
//
// +kubebuilder:object:generate=true
// +groupName=serving.serval.dev
package v1beta1
