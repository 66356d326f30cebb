// Package testenv starts a real kube-apiserver and etcd (envtest) on the binaries
// the project builds into bin/, and installs Serval's CRDs together with the real
// upstream CRDs of Gateway API, Knative Serving and Istio, read from the Go module
// cache. A test package starts one environment in TestMain and shares it.
package testenv
