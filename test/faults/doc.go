// Package faults injects faults into a running Serval on a local cluster
// (internal/sandbox), with the manager as a process of its own: it is killed,
// paused, run twice with leader election, and the API server under it is
// restarted. Each test checks that Serval converges with nothing lost,
// duplicated or orphaned, and logs its figures (go test -v). `make test`
// runs them at a size that fits its budget; `make test-faults` runs them
// with -long, at a larger size.
package faults
