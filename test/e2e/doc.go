// Package e2e runs Serval end to end on internal/sandbox: a real API server,
// controller-manager, scheduler and kwok nodes, with the operator running
// in-process.
package e2e
