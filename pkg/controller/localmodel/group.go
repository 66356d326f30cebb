package localmodel

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;patch;update;delete

// GroupReconciler reports the space a node group's caches take and runs
// the node agent on its nodes when serval-config enables it.
type GroupReconciler struct {
	Client   client.Client
	Applier  *apply.Applier
	Recorder events.EventRecorder
	Config   *config.Store
	// Namespace is the manager's, where the agents run; AgentImage the
	// agent's image unless serval-config names one (the manager's own).
	Namespace, AgentImage string

	pipeline *pipeline.Pipeline
	status   *statuswriter.Writer[v1alpha1.LocalModelNodeGroupStatus]
}

// Reconcile applies the group's agent (or prunes it) and writes its
// status.
func (r *GroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &v1alpha1.LocalModelNodeGroup{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		if apierrors.IsNotFound(err) {
			r.status.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if g.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	cfg, err := r.Config.InForce(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var objs []apply.Object
	if cfg.LocalModel.AgentEnabled {
		image := cfg.LocalModel.AgentImage
		if image == "" {
			image = r.AgentImage
		}
		ds, err := cacheobjects.Agent(cacheobjects.AgentInputs{Group: g, Namespace: r.Namespace, Image: image})
		if err != nil {
			// Admission refuses such a group; one made before is reported.
			r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, "InvalidNodeGroup", "Agent", err.Error())
		} else {
			objs = append(objs, ds)
		}
	}
	out, err := r.pipeline.Run(ctx, pipeline.Request{Owner: pipeline.Owner{Object: g, Ref: *cacheobjects.GroupRef(g)},
		Producers: []pipeline.Producer{pipeline.Objects("", objs...)}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if out.Failure != nil {
		return ctrl.Result{}, errors.New(out.Failure.Message)
	}
	caches, err := ListCaches(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes); err != nil {
		return ctrl.Result{}, err
	}
	st := GroupStatus(g, caches.All(), nodes.Items)
	if _, err := r.status.Write(ctx, g, g.DeepCopy(), st); err != nil {
		return ctrl.Result{}, fmt.Errorf("write the status of LocalModelNodeGroup %s: %w", g.Name, err)
	}
	return ctrl.Result{}, nil
}

// GroupStatus is a group's space and nodes.
func GroupStatus(g *v1alpha1.LocalModelNodeGroup, caches []v1alpha1.ModelCache, nodes []corev1.Node) v1alpha1.LocalModelNodeGroupStatus {
	u := UsageOf(g.Name, caches, "")
	avail := g.Spec.StorageLimit.DeepCopy()
	avail.Sub(u.Used)
	if avail.Sign() < 0 {
		avail = resource.MustParse("0")
	}
	ready, notReady := NodesOf(g, nodes)
	st := v1alpha1.LocalModelNodeGroupStatus{Used: u.Used, Available: avail}
	st.Nodes = append(append(st.Nodes, ready...), notReady...)
	// Normalised so a status read back compares equal.
	st.Used = resource.MustParse(st.Used.String())
	st.Available = resource.MustParse(st.Available.String())
	return st
}

// SetupWithManager registers the reconciler and its watches: the groups,
// their agents (through the pipeline), the caches (their sizes and
// groups), the nodes, and serval-config.
func (r *GroupReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.pipeline = pipeline.New(mgr, &v1alpha1.LocalModelNodeGroup{}, r.Applier, r.Recorder)
	r.status = &statuswriter.Writer[v1alpha1.LocalModelNodeGroupStatus]{Client: mgr.GetClient(),
		Status: func(o client.Object) *v1alpha1.LocalModelNodeGroupStatus {
			return &o.(*v1alpha1.LocalModelNodeGroup).Status
		}}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return pipeline.Requests(ctx, r.Client, &v1alpha1.LocalModelNodeGroupList{})
	})
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("localmodelnodegroup").
		WithOptions(controller.Options{RateLimiter: pipeline.RateLimiter()}).
		For(&v1alpha1.LocalModelNodeGroup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.LocalModelCache{}, all, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletionStarted))).
		Watches(&v1alpha1.LocalModelNamespaceCache{}, all, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletionStarted))).
		Watches(&corev1.Node{}, all, builder.WithPredicates(NodeChanged)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			if client.ObjectKeyFromObject(obj) != r.Config.Key() {
				return nil
			}
			return pipeline.Requests(ctx, r.Client, &v1alpha1.LocalModelNodeGroupList{})
		})).
		Build(r)
	if err != nil {
		return err
	}
	return r.pipeline.Watches.Start(ctx, c)
}
