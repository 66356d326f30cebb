// Package dev is `serval dev`: a local cluster on simulated nodes
// (internal/sandbox) with Serval's CRDs, the default runtimes and the manager
// running in-process, a sample InferenceService applied, and its progress to
// Ready shown as it happens.
package dev
