// Package inferencegraph reconciles InferenceGraphs: it resolves the
// InferenceServices a graph names to their URLs, runs the router (cmd/router)
// with the graph in the graph's deployment mode through the same modes,
// routes and apply path as InferenceServices, and reports the graph Ready
// only when the router serves and every InferenceService it names is Ready.
package inferencegraph
