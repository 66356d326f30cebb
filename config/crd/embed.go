// Package crd holds Serval's CustomResourceDefinitions (bases/, generated
// by make manifests), for the programs that check an object as the API
// server would before it is sent (serval migrate).
package crd

import "embed"

// Bases are the CRD files, one per kind.
//
//go:embed bases/*.yaml
var Bases embed.FS
