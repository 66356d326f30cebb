// Package clustertest runs the activator against a real API server: its
// controllers put it in front of a component at zero and take it away,
// and a stand-in for KEDA drives its external push scaler as KEDA does.
package clustertest
