// Package v1alpha2 holds the LLM API of serving.serval.dev:
// LLMInferenceService, which serves a large language model with vLLM
// workloads behind an InferencePool and its endpoint picker (the Gateway
// API Inference Extension), and LLMInferenceServiceConfig, the presets an
// LLMInferenceService is merged over. Both are field-compatible with
// KServe's serving.kserve.io/v1alpha2 kinds.
//
// +kubebuilder:object:generate=true
// +groupName=serving.serval.dev
package v1alpha2
