// Package kubeingress routes InferenceServices with one networking.k8s.io
// Ingress, {isvc}, holding the top-level and component host rules. An
// Ingress has no readiness conditions: it is ready once created, or once it
// has a load-balancer address when the config asks for one.
package kubeingress
