// Package pipeline is the one path from an owner's rendered children to
// the cluster, shared by every kind Serval owns (InferenceService,
// InferenceGraph, and the kinds after them): it renders the workloads of
// the owner's components with the mode chosen once, checks that the
// optional CRDs they need exist, renders the routes with the router chosen
// once, applies everything through package apply, prunes what is no longer
// desired, and observes the result. It returns what happened as data
// (Outcome); each owner kind turns that into its own status conditions.
//
// An owner kind brings what is its own: reading its spec into components
// (package components), its route plan (package ingress) and its status.
package pipeline
