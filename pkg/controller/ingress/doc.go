// Package ingress decides how an InferenceService is reached: a Plan of
// hosts, paths and backend Services computed from the components and the
// ingress config, and one Router per kind of route (networking.k8s.io
// Ingress in kubeingress, Gateway API HTTPRoutes in gatewayapi, an Istio
// VirtualService in istio, Knative's own routes in knativeroute, None for
// cluster-local InferenceServices), chosen once per reconcile.
package ingress
