package localmodel

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// The reasons of a cache's Ready condition.
const (
	ReasonDownloaded        = "Downloaded"
	ReasonDownloading       = "Downloading"
	ReasonDownloadFailed    = "DownloadFailed"
	ReasonNodeGroupNotFound = "NodeGroupNotFound"
	ReasonNoNodes           = "NoNodes"
	ReasonVolumeFailed      = "VolumeFailed"
)

// ConditionReady is the type of a cache's one condition.
const ConditionReady = "Ready"

// copyState is a cache's copy on one node.
type copyState struct {
	node   string
	status v1alpha1.NodeStatus
	detail v1alpha1.LocalModelDetail
}

// nodeStatusOf converts an agent's report to the cache's word for it
// (KServe's mapping: no report yet is pending).
func nodeStatusOf(s v1alpha1.ModelStatus) v1alpha1.NodeStatus {
	switch s {
	case v1alpha1.ModelDownloading:
		return v1alpha1.NodeDownloading
	case v1alpha1.ModelDownloaded:
		return v1alpha1.NodeDownloaded
	case v1alpha1.ModelDownloadError:
		return v1alpha1.NodeDownloadError
	}
	return v1alpha1.NodeDownloadPending
}

// cacheStatus computes a cache's status from its copies, the groups it
// names that do not exist, and its users.
func cacheStatus(copies []copyState, missingGroups []string, users users, generation int64) v1alpha1.LocalModelCacheStatus {
	st := v1alpha1.LocalModelCacheStatus{NodeStatus: map[string]v1alpha1.NodeStatus{}, ObservedGeneration: generation,
		InferenceServices: users.isvcs, LLMInferenceServices: users.llms}
	counts := &v1alpha1.ModelCopies{Total: len(copies)}
	var pending, failed []string
	for _, c := range copies {
		st.NodeStatus[c.node] = c.status
		switch c.status {
		case v1alpha1.NodeDownloaded:
			counts.Available++
		case v1alpha1.NodeDownloadError:
			counts.Failed++
			why := c.detail.Reason
			if c.detail.Message != "" {
				why += ": " + c.detail.Message
			}
			if why == "" {
				why = "the download failed"
			}
			failed = append(failed, fmt.Sprintf("%s (%s, after %d attempts)", c.node, why, c.detail.Attempts))
		case v1alpha1.NodeNotReady:
		default:
			p := c.node + " " + strings.TrimPrefix(string(c.status), "Node")
			if c.detail.Reason != "" {
				// A pod that cannot run: unschedulable, its image not pulled.
				p += fmt.Sprintf(" (%s: %s)", c.detail.Reason, c.detail.Message)
			}
			pending = append(pending, p)
		}
	}
	st.ModelCopies = counts
	if len(st.NodeStatus) == 0 {
		st.NodeStatus = nil // as read back: an empty map is not stored
	}
	cond := metav1.Condition{Type: ConditionReady, ObservedGeneration: generation}
	switch {
	case len(missingGroups) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNodeGroupNotFound
		cond.Message = "no LocalModelNodeGroup named " + strings.Join(missingGroups, ", ")
	case len(copies) == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNoNodes
		cond.Message = "no node matches the node affinity of its node groups"
	case len(failed) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonDownloadFailed
		cond.Message = fmt.Sprintf("%d of %d nodes hold the model; the download failed on %s", counts.Available, counts.Total, strings.Join(failed, "; "))
	case len(pending) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonDownloading
		cond.Message = fmt.Sprintf("%d of %d nodes hold the model; waiting for %s", counts.Available, counts.Total, strings.Join(pending, ", "))
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonDownloaded
		cond.Message = fmt.Sprintf("%d of %d nodes hold the model", counts.Available, counts.Total)
		if n := counts.Total - counts.Available; n > 0 {
			cond.Message += fmt.Sprintf("; %d not ready", n)
		}
	}
	st.Conditions = []metav1.Condition{cond}
	return st
}

// users are the services that mount a cache, in name order.
type users struct {
	isvcs, llms []v1alpha1.NamespacedName
}

func (u *users) sort() {
	cmp := func(a, b v1alpha1.NamespacedName) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	}
	slices.SortFunc(u.isvcs, cmp)
	slices.SortFunc(u.llms, cmp)
}

// CacheReady says whether services can start on a cache's copies, and if
// not why: every ready node of its groups must hold the model, since the
// scheduler may place a pod on any of them (the group's affinity), and a
// pod on a node still downloading would find half a model.
func CacheReady(c v1alpha1.ModelCache) (ok bool, reason, message string) {
	kind := v1alpha1.CacheKindOf(c.GetNamespace())
	for _, cond := range c.CacheStatus().Conditions {
		if cond.Type != ConditionReady {
			continue
		}
		if cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == c.GetGeneration() {
			return true, "", ""
		}
		return false, "ModelCache" + cond.Reason, fmt.Sprintf("%s %s: %s", kind, c.GetName(), cond.Message)
	}
	return false, "ModelCache" + ReasonDownloading, fmt.Sprintf("%s %s has no copy of the model yet", kind, c.GetName())
}
