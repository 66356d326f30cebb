// Package llminferenceservice reconciles LLMInferenceServices: it combines
// each with its presets (package presets), renders its children (package
// children), applies them through the child pipeline every owner kind
// shares, observes the model workload, the endpoint picker, the
// InferencePool and the route, and computes KServe's conditions.
package llminferenceservice
