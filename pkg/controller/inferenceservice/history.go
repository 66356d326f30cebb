package inferenceservice

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/runtime"
)

// history is what an InferenceService's status remembers that its next
// reconcile needs: read once, here, at the start of a reconcile, so that no
// phase reads the status as memory on its own.
type history struct {
	// Mode is the deployment mode the InferenceService was deployed in; it
	// never changes once set ("" before the first deployment).
	Mode v1beta1.DeploymentMode
	// ServingRuntime and ClusterServingRuntime name the runtime chosen
	// last, whatever has changed since.
	ServingRuntime, ClusterServingRuntime string
	// Runtime is that runtime while the spec is unchanged since it was
	// chosen: it stays chosen (stickiness). nil otherwise.
	Runtime *runtime.Previous
	// Pinned: a runtime or config change must not roll the predictor. The
	// disable-auto-update annotation is set, the spec is unchanged since
	// the last full reconcile, and the predictor has been deployed before.
	Pinned bool
	// Components are each component's status as last written: its last
	// and previous rolled-out revisions (Knative's canary splits traffic
	// with them) and its URL.
	Components map[v1beta1.ComponentType]v1beta1.ComponentStatus
}

// readHistory reads the history from isvc's status.
func readHistory(isvc *v1beta1.InferenceService) history {
	st := &isvc.Status
	h := history{
		ServingRuntime: st.ServingRuntimeName, ClusterServingRuntime: st.ClusterServingRuntimeName,
		Components: st.Components,
	}
	if m, ok := v1beta1.NormalizeDeploymentMode(string(st.DeploymentMode)); ok {
		h.Mode = m
	}
	unchanged := st.ObservedGeneration == isvc.Generation
	if unchanged && st.ProtocolVersion != "" {
		switch {
		case st.ServingRuntimeName != "":
			h.Runtime = &runtime.Previous{Name: st.ServingRuntimeName, Namespaced: true, Protocol: st.ProtocolVersion}
		case st.ClusterServingRuntimeName != "":
			h.Runtime = &runtime.Previous{Name: st.ClusterServingRuntimeName, Protocol: st.ProtocolVersion}
		}
	}
	h.Pinned = isvc.Annotations[v1beta1.DisableAutoUpdateAnnotation] == "true" && unchanged && st.DeploymentMode != ""
	return h
}

// rolledOutRevisions are the components' last rolled-out revisions.
func (h history) rolledOutRevisions() map[v1beta1.ComponentType]string {
	out := make(map[v1beta1.ComponentType]string, len(h.Components))
	for t, cs := range h.Components {
		out[t] = cs.LatestRolledoutRevision
	}
	return out
}
