// Package kubeingress routes InferenceServices with one networking.k8s.io
// Ingress each: the top-level host and every component host.
package kubeingress
