// Package gatewayapi routes InferenceServices with Gateway API HTTPRoutes:
// {isvc} for the top-level host and {isvc}-{component} per component, each
// attached to the configured Gateway. A route is ready when every parent
// reports Accepted and ResolvedRefs.
package gatewayapi
