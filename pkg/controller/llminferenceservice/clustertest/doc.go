// Package clustertest tests the LLMInferenceService controller against a
// real kube-apiserver and etcd (envtest, from bin/) with the real Gateway
// API and Inference Extension CRDs. It holds no code of its own.
package clustertest
