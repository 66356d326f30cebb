// Package presets combines an LLMInferenceService with its presets
// (LLMInferenceServiceConfigs) into the spec Serval renders, as KServe
// does: the well-known presets the service's shape calls for, then the
// service's spec.baseRefs in order, then the service's own spec, each merged
// over the last as Kubernetes merges a strategic patch (a pod template's
// containers by name); the Go templates in their strings rendered over the
// service; and the references between the parts settled (the route's
// Gateways, its backend, the picker's Service account and config). It is
// pure but for reading the presets through a Source.
package presets
