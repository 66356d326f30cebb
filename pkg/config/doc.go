// Package config is Serval's typed configuration, parsed from the serval-config
// ConfigMap. Parse validates every key once per change; the reconciler reads a
// snapshot and never fetches the ConfigMap itself.
package config
