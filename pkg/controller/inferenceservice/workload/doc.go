// Package workload turns Components into the objects that run them. Each
// deployment mode has one implementation of Builder (standard: Deployment,
// Service and HPA; knative: a Knative Service), chosen once per reconcile.
package workload
