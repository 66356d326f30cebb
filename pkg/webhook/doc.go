// Package webhook is Serval's admission: a mutating and a validating webhook
// for InferenceServices and validating webhooks for ServingRuntimes and
// ClusterServingRuntimes. Each calls the API package's pure functions, with
// config and runtimes read from the manager's cache (no API calls per
// request). There is no pod-mutating webhook.
package webhook
