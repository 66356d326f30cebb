package inferencegraph

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// Reconciler reconciles InferenceGraphs.
type Reconciler struct {
	// Client reads graphs, InferenceServices, config and the graphs'
	// children from the manager's cache, the one that holds every owner
	// kind's children.
	Client   client.Client
	Applier  *apply.Applier
	Recorder events.EventRecorder
	Config   *config.Store
	// KnativeFeatures are Knative's feature flags, which decide whether a
	// Knative-mode router's pod would be accepted.
	KnativeFeatures *knative.FeaturesStore
	// RouterImage is the router's image unless serval-config names one: the
	// manager's own image, which holds the router binary.
	RouterImage string
	// GraphLimits bound what one request may cost in a graph: a graph over
	// them gets InvalidSpec (admission refuses it; one admitted before the
	// limits changed is caught here), and its router enforces them.
	GraphLimits v1alpha1.GraphLimits

	pipeline *pipeline.Pipeline
	status   *statuswriter.Writer[v1alpha1.InferenceGraphStatus]
}

// +kubebuilder:rbac:groups=serving.serval.dev,resources=inferencegraphs,verbs=get;list;watch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=inferencegraphs/status,verbs=get;update;patch

// scope is one reconcile's state.
type scope struct {
	ig   *v1alpha1.InferenceGraph
	orig *v1alpha1.InferenceGraph
	mode v1beta1.DeploymentMode
	// notReady names the InferenceServices the graph names that are not
	// Ready, each with why.
	notReady []string
	// waiting: some InferenceService has no address yet, so the router is
	// not rendered; what runs is left as it is.
	waiting bool
	comp    *components.Component
	plan    *ingress.Plan
	// out is what the child pipeline did and observed.
	out pipeline.Outcome
	// failure stopped the reconcile before the router could be applied:
	// on the router (Component RouterComponent) or on the route ("").
	failure *pipeline.Failure
}

// Reconcile brings one InferenceGraph's router, route and status in line
// with its spec and the InferenceServices it names.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	ig := &v1alpha1.InferenceGraph{}
	if err := r.Client.Get(ctx, req.NamespacedName, ig); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetOwner(req.Namespace, req.Name)
			r.status.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ig.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // children carry owner references
	}
	s := &scope{ig: ig, orig: ig.DeepCopy()}
	err := r.reconcileRouter(ctx, s)
	if statusErr := r.writeStatus(ctx, s); statusErr != nil {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	return s.out.Result(err)
}

func (r *Reconciler) reconcileRouter(ctx context.Context, s *scope) error {
	cfg, cfgErrs, err := r.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	if cfg == nil {
		s.failure = &pipeline.Failure{Reason: v1beta1.ReasonInvalidConfig, Component: RouterComponent,
			Message: fmt.Sprintf("serval-config is invalid and no earlier version was valid: %v", errors.Join(keyErrors(cfgErrs)...))}
		return nil
	}
	s.mode = v1alpha1.GraphDeploymentMode(s.ig, cfg.DefaultDeploymentMode)
	if errs := v1alpha1.ValidateInferenceGraph(s.ig, r.GraphLimits); len(errs) > 0 {
		s.failure = &pipeline.Failure{Reason: v1beta1.ReasonInvalidSpec, Component: RouterComponent, Message: errs.ToAggregate().Error()}
		return nil
	}
	urls, err := r.resolveServices(ctx, s)
	if err != nil {
		return err
	}
	req := pipeline.Request{Owner: pipeline.Owner{Object: s.ig, Ref: OwnerOf(s.ig)}, Mode: childkinds.Mode(s.mode)}
	in := Inputs{Graph: s.ig, Mode: s.mode, URLs: urls, Router: cfg.Router, DefaultImage: r.RouterImage, Limits: r.GraphLimits}
	s.comp, err = Build(in)
	var tooLarge *GraphTooLargeError
	if errors.As(err, &tooLarge) {
		s.failure = &pipeline.Failure{Reason: v1beta1.ReasonInvalidSpec, Component: RouterComponent, Message: tooLarge.Error()}
		return nil
	}
	if err != nil {
		// An InferenceService has no address yet: the router waits for it,
		// and what runs is only observed.
		s.waiting = true
		req.Components = []*components.Component{observed(in)}
		return r.pipeline.Observe(ctx, r.Client, req, &s.out)
	}
	req.Components = []*components.Component{s.comp}
	if req.Cluster, err = r.KnativeFeatures.Cluster(ctx); err != nil {
		return err
	}
	plan, err := ingress.MakeSinglePlan(OwnerOf(s.ig), config.Meta{Labels: s.ig.Labels, Annotations: s.ig.Annotations}, RouterComponent, s.comp.ClusterLocal, s.ig.Spec.TimeoutSeconds,
		map[string]string{v1alpha1.InferenceGraphLabel: s.ig.Name}, &cfg.Ingress)
	var hostErr *ingress.HostError
	if errors.As(err, &hostErr) {
		s.failure = &pipeline.Failure{Reason: v1beta1.ReasonInvalidHost, Message: hostErr.Error()}
		return nil
	}
	if err != nil {
		return fmt.Errorf("plan the route: %w", err)
	}
	s.plan, req.Plan = plan, plan
	req.Router = childkinds.Router(s.mode, &cfg.Ingress, s.comp.ClusterLocal, r.pipeline.Watches.Present)
	s.out, err = r.pipeline.Run(ctx, req)
	s.failure = s.out.Failure
	return err
}

// observed is the router's component as far as reading it needs: its name,
// owner and selector.
func observed(in Inputs) *components.Component {
	return &components.Component{Type: RouterComponent, Owner: OwnerOf(in.Graph), Mode: in.Mode, OwnerLabel: v1alpha1.InferenceGraphLabel,
		PodSet: components.PodSet{Name: in.Graph.Name, Selector: map[string]string{v1alpha1.InferenceGraphLabel: in.Graph.Name}}}
}

func keyErrors(errs []config.KeyError) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}
