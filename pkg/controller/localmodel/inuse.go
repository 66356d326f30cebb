package localmodel

import (
	"context"
	"reflect"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// inUse are the model folders of the node's groups ({group}/{storage
// key}) that a volume still binds. A folder volume lives while a claim is
// bound to it, and Kubernetes keeps a claim while a pod mounts it: so a
// folder in this list may be mounted, and its agent deletes none of them,
// whatever the list of wanted models says.
func (d *Downloads) inUse(ctx context.Context, lmn *v1alpha1.LocalModelNode) ([]string, error) {
	node := &corev1.Node{}
	if err := d.Client.Get(ctx, types.NamespacedName{Name: lmn.Name}, node); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	groups := &v1alpha1.LocalModelNodeGroupList{}
	if err := d.Client.List(ctx, groups); err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for i := range groups.Items {
		if sel := Selector(&groups.Items[i]); sel != nil && node.Name != "" {
			if ok, err := corev1helpers.MatchNodeSelectorTerms(node, sel); err == nil && ok {
				mine[groups.Items[i].Name] = true
			}
		}
	}
	// A group the node's list names, or whose agent reports a disk on it,
	// is the node's too, even when the node object is gone or its labels
	// changed: its disk may still be there.
	for _, e := range lmn.Spec.LocalModels {
		mine[e.NodeGroup] = true
	}
	for g := range lmn.Status.Disks {
		mine[g] = true
	}
	pvs := &corev1.PersistentVolumeList{}
	if err := d.Client.List(ctx, pvs, client.HasLabels{modelcache.CopyLabel}); err != nil {
		return nil, err
	}
	var out []string
	for _, pv := range pvs.Items {
		g, key := pv.Labels[modelcache.GroupNameLabel], pv.Labels[modelcache.CopyLabel]
		if mine[g] && !slices.Contains(out, g+"/"+key) {
			out = append(out, g+"/"+key)
		}
	}
	slices.Sort(out)
	return out, nil
}

// SetupWithManager registers the downloads: every LocalModelNode (its
// list, and its agents' reports), the download Jobs it owns, the folder
// volumes (which folders are in use) and the node groups.
func (d *Downloads) SetupWithManager(mgr ctrl.Manager) error {
	d.credentials = credentials.NewMemo()
	d.status = newNodeStatusWriter(mgr.GetClient())
	return ctrl.NewControllerManagedBy(mgr).
		Named("localmodel-downloads").
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, RateLimiter: pipeline.RateLimiter()}).
		For(&v1alpha1.LocalModelNode{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, agentReported))).
		Owns(&batchv1.Job{}).
		Watches(&corev1.PersistentVolume{}, handler.EnqueueRequestsFromMapFunc(d.allNodes), builder.WithPredicates(folderVolume)).
		Watches(&v1alpha1.LocalModelNodeGroup{}, handler.EnqueueRequestsFromMapFunc(d.allNodes), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(d)
}

// newNodeStatusWriter is the writer of the manager's part of a
// LocalModelNode's status. Every patch carries the resourceVersion: a
// merge patch drops a field only if the object it is computed from has
// it, so one computed from a copy that has not seen the agents' or this
// writer's last patch would leave stale fields (a Job still running) in
// place.
func newNodeStatusWriter(c client.Client) *statuswriter.Writer[v1alpha1.LocalModelNodeStatus] {
	return &statuswriter.Writer[v1alpha1.LocalModelNodeStatus]{Client: c, AlwaysLock: true,
		Status: func(o client.Object) *v1alpha1.LocalModelNodeStatus { return &o.(*v1alpha1.LocalModelNode).Status }}
}

// agentReported passes an agent's new report of a node's copies (and not
// the manager's own writes, which would loop).
var agentReported = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !reflect.DeepEqual(e.ObjectOld.(*v1alpha1.LocalModelNode).Status.Copies, e.ObjectNew.(*v1alpha1.LocalModelNode).Status.Copies)
	},
}

// folderVolume passes the creation and deletion of a volume of one model
// folder.
var folderVolume = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return e.Object.GetLabels()[modelcache.CopyLabel] != "" },
	DeleteFunc:  func(e event.DeleteEvent) bool { return e.Object.GetLabels()[modelcache.CopyLabel] != "" },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// allNodes enqueues every LocalModelNode: volumes and groups change
// rarely, and nodes are few.
func (d *Downloads) allNodes(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &v1alpha1.LocalModelNodeList{}
	if err := d.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, n := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: n.Name}})
	}
	return out
}
