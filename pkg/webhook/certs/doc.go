// Package certs lets the manager serve its webhooks with certificates it
// manages itself: a long-lived CA and a serving certificate (DNS and IP SANs)
// kept in a Secret, written to the webhook server's cert directory by the
// manager (no kubelet mount needed, so it works out of cluster too), the CA
// injected into the webhook configurations, and the serving certificate
// rotated before it expires. The webhook server reloads the files on change.
package certs
