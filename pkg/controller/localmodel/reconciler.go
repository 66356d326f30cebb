package localmodel

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelcaches;localmodelnamespacecaches;localmodelnodegroups,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelcaches/status;localmodelnamespacecaches/status;localmodelnodegroups/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelcaches/finalizers;localmodelnamespacecaches/finalizers,verbs=update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes,verbs=get;list;watch;create;patch;update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumes;persistentvolumeclaims,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;update;delete

// Reconciler keeps one kind of cache (LocalModelCache or
// LocalModelNamespaceCache) on its nodes.
type Reconciler struct {
	// Client reads from the manager's cache and writes; APIReader reads
	// what the cache does not hold (users' claims, credentials).
	Client    client.Client
	APIReader client.Reader
	Applier   *apply.Applier
	Recorder  events.EventRecorder
	Config    *config.Store
	// Namespaced says which kind: LocalModelNamespaceCache when true.
	Namespaced bool

	pipeline    *pipeline.Pipeline
	status      *statuswriter.Writer[v1alpha1.LocalModelCacheStatus]
	credentials *credentials.Memo
}

// newCache returns an empty cache of the reconciler's kind.
func (r *Reconciler) newCache() v1alpha1.ModelCache {
	if r.Namespaced {
		return &v1alpha1.LocalModelNamespaceCache{}
	}
	return &v1alpha1.LocalModelCache{}
}

// Reconcile lists the cache on its nodes, applies its volumes and claims,
// and reports its copies and users.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c := r.newCache()
	if err := r.Client.Get(ctx, req.NamespacedName, c); err != nil {
		if apierrors.IsNotFound(err) {
			r.status.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, r.finalize(ctx, c)
	}
	if !controllerutil.ContainsFinalizer(c, modelcache.Finalizer) {
		patch := client.MergeFrom(c.DeepCopyObject().(client.Object))
		controllerutil.AddFinalizer(c, modelcache.Finalizer)
		if err := r.Client.Patch(ctx, c, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	cfg, err := r.Config.InForce(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if nc, ok := c.(*v1alpha1.LocalModelNamespaceCache); ok && nc.Spec.PVCRef != "" {
		return r.reconcileClaim(ctx, nc, cfg)
	}
	groups, missing, err := r.groups(ctx, c.CacheSpec().NodeGroups)
	if err != nil {
		return ctrl.Result{}, err
	}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes); err != nil {
		return ctrl.Result{}, err
	}
	copies, err := r.syncNodes(ctx, c, groups, nodes.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	u, byNamespace, err := r.users(ctx, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	failure, err := r.applyVolumes(ctx, c, groups, byNamespace, cfg.LocalModel.JobNamespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := cacheStatus(copies, missing, u, c.GetGeneration())
	if failure != nil {
		// Volumes the API server refused (a claim in a namespace that does
		// not exist, a template it finds invalid): said in the status, and
		// tried again later, as nothing Serval watches announces the fix.
		st.Conditions[0].Status, st.Conditions[0].Reason = metav1.ConditionFalse, ReasonVolumeFailed
		st.Conditions[0].Message = failure.Message()
		return ctrl.Result{RequeueAfter: VolumeRetryInterval}, r.writeStatus(ctx, c, st)
	}
	return ctrl.Result{}, r.writeStatus(ctx, c, st)
}

// VolumeRetryInterval is when a cache whose volumes the API server refused
// is tried again.
const VolumeRetryInterval = 30 * time.Second

// groups reads the named groups; missing are those that do not exist.
func (r *Reconciler) groups(ctx context.Context, names []string) (found []*v1alpha1.LocalModelNodeGroup, missing []string, err error) {
	for _, name := range names {
		g := &v1alpha1.LocalModelNodeGroup{}
		err := r.Client.Get(ctx, types.NamespacedName{Name: name}, g)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return nil, nil, err
		default:
			found = append(found, g)
		}
	}
	return found, missing, nil
}

// entryOf is the cache's entry in a node's list, for group.
func entryOf(c v1alpha1.ModelCache, group string) v1alpha1.LocalModelInfo {
	spec := c.CacheSpec()
	size := spec.ModelSize.DeepCopy()
	return v1alpha1.LocalModelInfo{SourceModelUri: spec.SourceModelUri, ModelName: c.GetName(), Namespace: c.GetNamespace(),
		NodeGroup: group, ServiceAccountName: spec.ServiceAccountName, Storage: spec.Storage.DeepCopy(), ModelSize: &size}
}

// syncNodes lists the cache on every ready node of its groups (a node in
// two of its groups takes the first's claim), takes it off the nodes no
// longer in them, and returns its copy on each node.
func (r *Reconciler) syncNodes(ctx context.Context, c v1alpha1.ModelCache, groups []*v1alpha1.LocalModelNodeGroup, nodes []corev1.Node) ([]copyState, error) {
	want := map[string]v1alpha1.LocalModelInfo{}
	notReady := map[string]bool{}
	for _, g := range groups {
		ready, down := NodesOf(g, nodes)
		for _, n := range ready {
			if _, taken := want[n]; !taken {
				want[n] = entryOf(c, g.Name)
			}
		}
		for _, n := range down {
			notReady[n] = true
		}
	}
	key := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
	lmns := &v1alpha1.LocalModelNodeList{}
	if err := r.Client.List(ctx, lmns); err != nil {
		return nil, err
	}
	have := map[string]*v1alpha1.LocalModelNode{}
	for i := range lmns.Items {
		have[lmns.Items[i].Name] = &lmns.Items[i]
	}
	var copies []copyState
	for n, entry := range want {
		lmn := have[n]
		if lmn == nil {
			lmn = &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{entry}}}
			err := r.Client.Create(ctx, lmn)
			switch {
			case apierrors.IsAlreadyExists(err):
				// Another cache created it first (its cache and ours were
				// both behind): the entry goes into that one.
				if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(lmn), lmn); err != nil {
					return nil, err
				}
				if err := r.setEntry(ctx, lmn, key, &entry); err != nil {
					return nil, err
				}
			case err != nil:
				return nil, err
			}
		} else if err := r.setEntry(ctx, lmn, key, &entry); err != nil {
			return nil, err
		}
		copies = append(copies, copyState{node: n, status: nodeStatusOf(lmn.Status.ModelStatus[key]), detail: lmn.Status.Models[key]})
	}
	for n, lmn := range have {
		if _, kept := want[n]; !kept {
			if err := r.setEntry(ctx, lmn, key, nil); err != nil {
				return nil, err
			}
		}
	}
	for n := range notReady {
		if _, listed := want[n]; !listed {
			copies = append(copies, copyState{node: n, status: v1alpha1.NodeNotReady})
		}
	}
	slices.SortFunc(copies, func(a, b copyState) int { return strings.Compare(a.node, b.node) })
	return copies, nil
}

// setEntry makes the node's entry for key entry (nil: none), with one
// patch when it differs. The patch carries the resourceVersion: the list
// is written by every cache, and a stale write would drop another's entry.
// On a conflict (another cache's entry, or a status write: the manager and
// the agents report on the same object) it reads the node's object again,
// uncached, and tries again at once, as a conflict here is the normal case
// and no reason for a backoff.
func (r *Reconciler) setEntry(ctx context.Context, lmn *v1alpha1.LocalModelNode, key string, entry *v1alpha1.LocalModelInfo) error {
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(lmn), lmn); err != nil {
				return err
			}
		}
		first = false
		return r.patchEntry(ctx, lmn, key, entry)
	})
}

// patchEntry is one attempt of setEntry.
func (r *Reconciler) patchEntry(ctx context.Context, lmn *v1alpha1.LocalModelNode, key string, entry *v1alpha1.LocalModelInfo) error {
	models := slices.Clone(lmn.Spec.LocalModels)
	i := slices.IndexFunc(models, func(m v1alpha1.LocalModelInfo) bool { return m.StatusKey() == key })
	switch {
	case i >= 0 && entry == nil:
		models = slices.Delete(models, i, i+1)
	case i >= 0 && reflect.DeepEqual(models[i], *entry), i < 0 && entry == nil:
		return nil
	case i >= 0:
		models[i] = *entry
	default:
		models = append(models, *entry)
	}
	patch := client.MergeFromWithOptions(lmn.DeepCopy(), client.MergeFromWithOptimisticLock{})
	lmn.Spec.LocalModels = models
	return r.Client.Patch(ctx, lmn, patch)
}

// users finds the services that mount the cache: by the same choice their
// own reconcile makes (Choose). It returns them and, by namespace, the
// groups whose copies they mount.
func (r *Reconciler) users(ctx context.Context, c v1alpha1.ModelCache) (users, map[string][]string, error) {
	var u users
	byNamespace := map[string][]string{}
	var opts []client.ListOption
	if ns := c.GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	caches, err := ListCaches(ctx, r.Client)
	if err != nil {
		return u, nil, err
	}
	add := func(obj metav1.Object, uri string, into *[]v1alpha1.NamespacedName) {
		use := caches.Choose(uri, obj.GetNamespace(), obj.GetAnnotations())
		if use == nil || use.Cache.GetUID() != c.GetUID() {
			return
		}
		*into = append(*into, v1alpha1.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
		if !slices.Contains(byNamespace[obj.GetNamespace()], use.Group) {
			byNamespace[obj.GetNamespace()] = append(byNamespace[obj.GetNamespace()], use.Group)
		}
	}
	isvcs := &v1beta1.InferenceServiceList{}
	if err := r.Client.List(ctx, isvcs, opts...); err != nil {
		return u, nil, err
	}
	for i := range isvcs.Items {
		if isvcs.Items[i].DeletionTimestamp == nil {
			add(&isvcs.Items[i], components.StorageURIOf(&isvcs.Items[i]), &u.isvcs)
		}
	}
	llms := &v1alpha2.LLMInferenceServiceList{}
	if err := r.Client.List(ctx, llms, opts...); err != nil {
		return u, nil, err
	}
	for i := range llms.Items {
		if llms.Items[i].DeletionTimestamp == nil {
			add(&llms.Items[i], llms.Items[i].Spec.Model.URI, &u.llms)
		}
	}
	u.sort()
	return u, byNamespace, nil
}

// applyVolumes applies the cache's volumes and claims and prunes those no
// longer desired, in one run. It returns the first object the API server
// refused, if any.
func (r *Reconciler) applyVolumes(ctx context.Context, c v1alpha1.ModelCache, groups []*v1alpha1.LocalModelNodeGroup, byNamespace map[string][]string, jobNamespace string) (*apply.Failure, error) {
	vp, err := r.volumesProducer(ctx, c, cacheobjects.Volumes(c, groups, byNamespace, jobNamespace))
	if err != nil {
		return nil, err
	}
	out, err := r.pipeline.Run(ctx, pipeline.Request{Owner: pipeline.Owner{Object: c, Ref: *cacheobjects.CacheRef(c)},
		Producers: []pipeline.Producer{vp}})
	if err != nil {
		return nil, err
	}
	return out.FirstFailure(), nil
}

// writeStatus writes the cache's status (see statuswriter).
func (r *Reconciler) writeStatus(ctx context.Context, c v1alpha1.ModelCache, st v1alpha1.LocalModelCacheStatus) error {
	orig := c.DeepCopyObject().(client.Object)
	if _, err := r.status.Write(ctx, c, orig, st); err != nil {
		return fmt.Errorf("write the status of %s %s: %w", v1alpha1.CacheKindOf(c.GetNamespace()), c.GetName(), err)
	}
	return nil
}

// newCacheStatusWriter is the writer of both cache kinds' statuses.
func newCacheStatusWriter(c client.Client) *statuswriter.Writer[v1alpha1.LocalModelCacheStatus] {
	return &statuswriter.Writer[v1alpha1.LocalModelCacheStatus]{Client: c,
		Status:     func(o client.Object) *v1alpha1.LocalModelCacheStatus { return o.(v1alpha1.ModelCache).CacheStatus() },
		Conditions: func(st *v1alpha1.LocalModelCacheStatus) *[]metav1.Condition { return &st.Conditions }}
}
