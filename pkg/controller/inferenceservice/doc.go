// Package inferenceservice is the InferenceService reconciler. One Reconcile
// loads a config snapshot, selects the runtime, resolves the components,
// renders the workload objects of the deployment mode, applies them through
// pkg/apply (the one write path), prunes what is no longer desired and writes
// a status computed from the observed children, once and only if it changed.
// The reconciler never writes the InferenceService's spec or metadata.
package inferenceservice
