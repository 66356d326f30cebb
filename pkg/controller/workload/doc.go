// Package workload turns Components into the objects that run them. Each
// deployment mode is one implementation of Mode (standard: Deployment,
// Service and HPA; knative: a Knative Service), chosen once per reconcile;
// each declares its kinds and reads its own readiness into a mode-neutral
// State.
package workload
