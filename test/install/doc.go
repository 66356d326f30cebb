// Package install proves the Helm charts on a local cluster (internal/sandbox):
// helm install, upgrade and uninstall for real, and the manager binary run
// out of cluster with exactly the rights of the chart's ServiceAccount
// (kubeconfig impersonation), webhooks on, pointed at it by URL. Every
// sample goes Ready and the manager's log holds no Forbidden: the chart's
// RBAC is enough. Other checks show it is not more than needed.
package install
