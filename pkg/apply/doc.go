// Package apply is Serval's one write path for child objects: server-side
// apply with the field owner serval-manager and forced ownership, skipping
// objects whose desired state was already applied to the live resourceVersion
// (zero writes at steady state), refusing to take over objects another owner
// controls, handing Deployment replicas over to an autoscaler without a drop,
// and pruning owned children that are no longer desired.
package apply
