// Package clustertest tests the InferenceService controller against a real kube-apiserver and etcd
// (envtest, from bin/). It holds no code of its own: the tests live apart
// from their package so that its pure tests run without a control plane
// (make test-unit), and these run in make test.
package clustertest
