// Package sandbox runs a complete local Kubernetes cluster on simulated nodes:
// etcd and kube-apiserver (through internal/testenv), kube-controller-manager,
// kube-scheduler and kwok, plus fake Nodes that kwok keeps Ready and whose Pods
// it moves to Running. `serval dev`, the end-to-end tests and the benchmarks
// build on it.
//
// Every process the sandbox starts is stopped by Stop, and also when the
// program that started it dies without calling Stop: a small reaper process
// (the same executable, re-run) notices its parent's death through a closed
// pipe and kills what is left.
package sandbox
