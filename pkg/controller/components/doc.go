// Package components resolves each part of an InferenceService (predictor,
// transformer, explainer) into one Component type: its names, labels and
// annotations, its complete pod spec (runtime container merged with the
// InferenceService's fields, storage and credentials injected) and its scaling
// settings. Everything after resolution (workload, ingress, status) is shared
// code over Components. The package is pure: inputs in, Components out.
package components
