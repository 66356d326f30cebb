// Package migrate rewrites KServe manifests into Serval manifests: API group,
// annotation and label prefixes, legacy deployment-mode values, and, where
// Serval's runtime choice would differ from KServe's, a pinned protocol. It
// edits the YAML node tree, so comments, key order and quoting stay as
// written, and passes documents that are not KServe's through byte for byte.
// What cannot be carried over is reported as Findings.
package migrate
