// Package serving groups the serving.serval.dev API versions: v1beta1
// (InferenceService) and v1alpha1 (ServingRuntime, ClusterServingRuntime). Its
// tests check the generated CRDs against a real API server.
package serving
