// Package router is the InferenceGraph data plane: it compiles a graph spec
// and serves it over HTTP, routing each request through Sequence, Switch,
// Ensemble and Splitter nodes to InferenceServices and URLs, with KServe's
// semantics. cmd/router runs it.
package router
