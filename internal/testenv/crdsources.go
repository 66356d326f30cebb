package testenv

// The Knative Serving module ships a Go package next to its CRDs for this very
// purpose: importing it keeps the module, at the version go.mod pins, in the
// build list, so `go mod download` finds the CRDs. Gateway API and Istio are
// kept by the typed clients that use them.
import _ "knative.dev/serving/config/core/300-resources"
