package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/nodeagent"
)

// PlayNodeAgents runs the model caches' node agent in this process, one
// per node group on each of its nodes, each with a disk of its own under
// root (kwok's nodes run no container, so the agent's DaemonSet would not
// run), until ctx ends. namespace is the manager's. It also plays the
// storage initializer of the agents' download Jobs: as soon as a Job
// appears it writes a small file where the Job's claim and subPath point,
// on its node's disk; kwok completes the Job's pod, and the Job controller
// the Job.
func (s *Sandbox) PlayNodeAgents(ctx context.Context, root, namespace string) {
	running := map[string]bool{}
	played := map[types.UID]bool{}
	for ctx.Err() == nil {
		s.startAgents(ctx, root, namespace, running)
		s.playDownloads(ctx, root, played)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startAgents starts an agent for every node and group that has none.
func (s *Sandbox) startAgents(ctx context.Context, root, namespace string, running map[string]bool) {
	groups := &v1alpha1.LocalModelNodeGroupList{}
	nodes := &corev1.NodeList{}
	if s.Client.List(ctx, groups) != nil || s.Client.List(ctx, nodes) != nil {
		return
	}
	for i := range groups.Items {
		g := &groups.Items[i]
		ready, notReady := localmodel.NodesOf(g, nodes.Items)
		for _, n := range append(ready, notReady...) {
			key := n + "/" + g.Name
			if running[key] {
				continue
			}
			running[key] = true
			o := nodeagent.Options{Node: n, Group: g.Name, Namespace: namespace, ModelsRoot: filepath.Join(root, n, g.Name),
				HealthProbeAddr: "0", SkipNameValidation: true}
			s.players.Go(func() {
				if err := nodeagent.Run(ctx, s.Env.Config, o); err != nil && ctx.Err() == nil {
					s.progress("node agent of %s: %v", key, err)
				}
			})
		}
	}
}

// playDownloads writes each new download Job's model on its node's disk.
func (s *Sandbox) playDownloads(ctx context.Context, root string, played map[types.UID]bool) {
	jobs := &batchv1.JobList{}
	if err := s.Client.List(ctx, jobs, client.HasLabels{modelcache.ModelLabel, modelcache.NodeLabel}); err != nil {
		return
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if played[j.UID] || len(j.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		c := j.Spec.Template.Spec.Containers[0]
		if len(c.Args) == 0 || len(c.VolumeMounts) == 0 {
			continue
		}
		// The model's folder on the group's disk, whichever claim the Job
		// writes through (a cluster cache's is the whole disk, a namespace
		// cache's the folder alone).
		dir := filepath.Join(root, j.Labels[modelcache.NodeLabel], j.Labels[modelcache.GroupNameLabel],
			modelcache.ModelPath(j.Labels[modelcache.ModelNamespaceLabel], c.Args[0]))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.progress("download of %s: %v", j.Name, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "MODEL"), []byte(c.Args[0]+"\n"), 0o644); err != nil {
			s.progress("download of %s: %v", j.Name, err)
			continue
		}
		played[j.UID] = true
	}
}
