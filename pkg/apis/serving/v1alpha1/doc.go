// Package v1alpha1 holds the runtime API of serving.serval.dev: ServingRuntime
// (namespaced) and ClusterServingRuntime (cluster-scoped), field-compatible with
// KServe's, and their pure validation.
//
// +kubebuilder:object:generate=true
// +groupName=serving.serval.dev
package v1alpha1
