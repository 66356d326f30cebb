// Package operator assembles Serval's controller-runtime manager: the scheme,
// a cache that holds only what Serval needs, and the reconcilers. cmd/manager,
// `serval dev` and the tests all start Serval through it.
package operator
