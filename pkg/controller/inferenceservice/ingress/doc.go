// Package ingress decides how an InferenceService is reached from outside: a
// Plan of hosts, paths and backend Services computed from the components and
// the ingress config, and one Builder per route kind (Gateway API HTTPRoutes
// in gatewayapi, networking.k8s.io Ingress in kubeingress), chosen once from
// the config. Cluster-local InferenceServices get no route.
package ingress
