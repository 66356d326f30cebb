package nodeagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// removeUnwanted deletes the folders of the group's disk that no entry
// wants and no volume binds (the manager's status.inUse), once they have
// been so for the grace period, each with an Event naming it and its size;
// a folder wanted or bound again is kept. The times live in memory: an
// agent that restarts waits a whole period again, never less.
func (a *Agent) removeUnwanted(ctx context.Context, lmn *v1alpha1.LocalModelNode, entries []v1alpha1.LocalModelInfo, grace time.Duration) error {
	keep := map[string]bool{}
	for _, e := range entries {
		keep[v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)] = true
	}
	for _, bound := range lmn.Status.InUse {
		if key, ok := strings.CutPrefix(bound, a.Group+"/"); ok {
			keep[key] = true
		}
	}
	keys, err := a.Disk.Keys()
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.unwantedSince == nil {
		a.unwantedSince = map[string]time.Time{}
	}
	present := map[string]bool{}
	for _, k := range keys {
		present[k] = true
		if keep[k] {
			delete(a.unwantedSince, k)
			continue
		}
		since, seen := a.unwantedSince[k]
		if !seen {
			a.unwantedSince[k] = a.now()
			a.Recorder.Eventf(lmn, nil, corev1.EventTypeNormal, "DeletionScheduled", "Delete",
				"the folder models/%s of node group %s is no longer wanted by any cache nor bound by any volume: deleting it in %s unless one wants it again", k, a.Group, grace)
			continue
		}
		if a.now().Sub(since) < grace {
			continue
		}
		size, _ := a.Disk.Size(k)
		log.FromContext(ctx).Info("Deleting a model no cache keeps", "folder", k, "bytes", size)
		if err := a.Disk.Remove(k); err != nil {
			return fmt.Errorf("delete the model folder %s: %w", k, err)
		}
		if a.hasher != nil {
			a.hasher.Forget(k)
		}
		delete(a.unwantedSince, k)
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeNormal, "Deleted", "Delete",
			"deleted the folder models/%s of node group %s (%d bytes): no cache has wanted it for %s", k, a.Group, size, grace)
	}
	for k := range a.unwantedSince {
		if !present[k] {
			delete(a.unwantedSince, k) // gone by other means
		}
	}
	return nil
}
