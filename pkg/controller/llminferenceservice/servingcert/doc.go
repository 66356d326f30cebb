// Package servingcert issues and keeps the self-signed serving certificate
// of an LLMInferenceService: the Secret its model pods and endpoint picker
// serve TLS with.
//
// A certificate is issued once and kept until it nears its expiry or the
// names it must cover change. Keys are ECDSA P-256, cheap to make. The
// certificate covers the services' DNS names, localhost and 127.0.0.1, and
// no other address: pod and cluster IPs change with every restart and would
// each mean a new key and a Secret write, and no client on the path checks
// an IP against the certificate.
package servingcert
