// Package runtime chooses the ServingRuntime or ClusterServingRuntime that
// serves a model, and the protocol it is served with. It is pure: the caller
// passes the runtimes it has and gets a Selection or a *SelectionError with a
// reason and a message that says what was considered.
package runtime
