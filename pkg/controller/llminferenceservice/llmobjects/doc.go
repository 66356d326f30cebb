// Package llmobjects renders the children of an LLMInferenceService from its
// combined spec (package presets): the model workload (a Deployment) and
// its Service; with a scheduler, the endpoint picker's Deployment, Service,
// ServiceAccount, Role and RoleBinding, and the InferencePool over the model
// pods; and the managed HTTPRoute. The builders are pure; names are
// KServe's, so that routes and tooling written for KServe find them.
package llmobjects
