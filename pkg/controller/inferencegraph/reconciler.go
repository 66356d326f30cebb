package inferencegraph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/childwatch"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/registry"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
)

// Reconciler reconciles InferenceGraphs.
type Reconciler struct {
	// Client reads graphs, InferenceServices and config from the manager's
	// cache.
	Client client.Client
	// Children reads the graphs' children from a cache of their own (see
	// package operator) and writes them; Applier applies through it.
	Children client.Client
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

	watches *childwatch.Watches
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
	router  ingress.Router
	state   workload.State
	routes  ingress.Readiness
	// failure stopped the reconcile before the router could be applied.
	failure *failure
	// applyFailure is the first child the API server refused.
	applyFailure *apply.Failure
}

type failure struct {
	reason, message string
	// condition is the condition the failure belongs to.
	condition string
}

// Reconcile brings one InferenceGraph's router, route and status in line
// with its spec and the InferenceServices it names.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	ig := &v1alpha1.InferenceGraph{}
	if err := r.Client.Get(ctx, req.NamespacedName, ig); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetOwner(req.Namespace, req.Name)
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
	if err == nil && s.applyFailure != nil && !s.applyFailure.Permanent() && !s.applyFailure.Stale() {
		err = s.applyFailure
	}
	if err == nil && s.applyFailure != nil && s.applyFailure.Stale() {
		return ctrl.Result{RequeueAfter: StaleRetryInterval}, nil
	}
	return ctrl.Result{}, err
}

// StaleRetryInterval is when a reconcile whose write met a newer version
// (409 Conflict) runs again, if no watch event brings it sooner.
const StaleRetryInterval = time.Second

func (r *Reconciler) reconcileRouter(ctx context.Context, s *scope) error {
	cfg, cfgErrs, err := r.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	if cfg == nil {
		s.failure = &failure{reason: v1beta1.ReasonInvalidConfig, condition: v1alpha1.GraphRouterReady,
			message: fmt.Sprintf("serval-config is invalid and no earlier version was valid: %v", errors.Join(keyErrors(cfgErrs)...))}
		return nil
	}
	s.mode = v1alpha1.GraphDeploymentMode(s.ig, cfg.DefaultDeploymentMode)
	if errs := v1alpha1.ValidateInferenceGraph(s.ig, r.GraphLimits); len(errs) > 0 {
		s.failure = &failure{reason: v1beta1.ReasonInvalidSpec, condition: v1alpha1.GraphRouterReady, message: errs.ToAggregate().Error()}
		return nil
	}
	urls, err := r.resolveServices(ctx, s)
	if err != nil {
		return err
	}
	mode := registry.Mode(s.mode)
	if k := r.watches.Missing(mode.Kinds()[:1]); k != nil {
		s.failure = &failure{reason: v1beta1.ReasonMissingCRD, condition: v1alpha1.GraphRouterReady,
			message: fmt.Sprintf("the CRD %s is not installed, and the InferenceGraph uses %s mode; %s", k.CRD, s.mode, k.Install)}
		return nil
	}
	in := Inputs{Graph: s.ig, Mode: s.mode, URLs: urls, Router: cfg.Router, DefaultImage: r.RouterImage, Limits: r.GraphLimits}
	if s.comp, err = Build(in); err != nil {
		// An InferenceService has no address yet: the router waits for it,
		// and what runs is only observed.
		s.waiting = true
		s.comp = observed(in)
		return r.observe(ctx, s, mode, r.Children)
	}
	features, err := r.KnativeFeatures.Snapshot(ctx)
	if err != nil {
		return err
	}
	if refused := mode.Refuse(s.comp, workload.Cluster{KnativeFeatures: features}); len(refused) > 0 {
		s.failure = &failure{reason: v1beta1.ReasonKnativeFeatureDisabled, condition: v1alpha1.GraphRouterReady,
			message: fmt.Sprintf("Knative would reject the router's pod as ConfigMap %s stands: %s", r.KnativeFeatures.Key(), strings.Join(refused, "; "))}
		return nil
	}
	objs, err := mode.Objects(s.comp)
	if err != nil {
		return fmt.Errorf("render the router: %w", err)
	}
	gvks := make([]schema.GroupVersionKind, len(objs))
	for i, o := range objs {
		gvks[i] = o.GVK
	}
	if k := r.watches.Missing(kinds.Used(mode.Kinds(), gvks)); k != nil {
		s.failure = &failure{reason: v1beta1.ReasonMissingCRD, condition: v1alpha1.GraphRouterReady,
			message: fmt.Sprintf("the CRD %s is not installed, and the router needs a %s; %s", k.CRD, k.GVK.Kind, k.Install)}
		return nil
	}
	routeObjs, err := r.planRoute(s, cfg)
	if err != nil {
		return err
	}
	objs = append(objs, routeObjs...)
	result := r.Applier.Apply(ctx, s.ig.UID, objs)
	for i, f := range result.Failures {
		if c := f.Conflict(); c != nil {
			r.Recorder.Eventf(s.ig, nil, corev1.EventTypeWarning, v1beta1.ReasonConflict, "Apply", c.Error())
			s.failure = &failure{reason: v1beta1.ReasonConflict, condition: v1alpha1.GraphRouterReady, message: c.Error()}
			return nil
		}
		if s.applyFailure == nil && !f.Stale() {
			r.Recorder.Eventf(s.ig, nil, corev1.EventTypeWarning, f.Reason(), "Apply", f.Message())
			s.applyFailure = &result.Failures[i]
		}
	}
	if s.applyFailure == nil && len(result.Failures) > 0 {
		s.applyFailure = &result.Failures[0] // stale: retried quietly
	}
	deleted, err := r.Applier.Prune(ctx, apply.PruneScope{
		Namespace: s.ig.Namespace, Labels: map[string]string{v1alpha1.InferenceGraphLabel: s.ig.Name}, Owner: s.ig.UID,
		Kinds: r.watches.PresentGVKs(), Fields: ownerFields(s.ig.Name),
	}, objs)
	for _, d := range deleted {
		r.Recorder.Eventf(s.ig, nil, corev1.EventTypeNormal, v1beta1.EventPruned, "Prune", "deleted %s, no longer desired", d)
	}
	if err != nil {
		return err
	}
	return r.observe(ctx, s, mode, apply.NewFreshReader(r.Children, result.Created))
}

// planRoute chooses the graph's router of requests (Ingress, Gateway API,
// Istio, Knative's own, none) as an InferenceService's, and renders it.
func (r *Reconciler) planRoute(s *scope, cfg *config.Config) ([]apply.Object, error) {
	plan, err := ingress.MakeSinglePlan(OwnerOf(s.ig), RouterComponent, s.comp.ClusterLocal, s.ig.Spec.TimeoutSeconds,
		map[string]string{v1alpha1.InferenceGraphLabel: s.ig.Name}, &cfg.Ingress)
	var hostErr *ingress.HostError
	if errors.As(err, &hostErr) {
		s.failure = &failure{reason: v1beta1.ReasonInvalidHost, condition: v1alpha1.GraphIngressReady, message: hostErr.Error()}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plan the route: %w", err)
	}
	s.plan = plan
	router := registry.Router(s.mode, &cfg.Ingress, s.comp.ClusterLocal, r.watches.Present)
	if k := r.watches.Missing(router.Kinds()); k != nil {
		s.failure = &failure{reason: v1beta1.ReasonMissingCRD, condition: v1alpha1.GraphIngressReady,
			message: fmt.Sprintf("the CRD %s is not installed, and the %s router needs it; %s", k.CRD, router.Name(), k.Install)}
		return nil, nil
	}
	s.router = router
	return router.Objects(plan)
}

// observe reads the router's workload and its route.
func (r *Reconciler) observe(ctx context.Context, s *scope, mode workload.Mode, reader client.Reader) error {
	st, err := mode.Observe(ctx, reader, s.comp)
	if err != nil {
		return err
	}
	s.state = st
	if s.router == nil {
		return nil
	}
	if s.routes, err = s.router.Ready(ctx, reader, s.plan, st); err != nil {
		return fmt.Errorf("read the route: %w", err)
	}
	return nil
}

// observed is the router's component as far as reading it needs: its name,
// owner and selector.
func observed(in Inputs) *components.Component {
	return &components.Component{Type: RouterComponent, Name: in.Graph.Name, Owner: OwnerOf(in.Graph), Mode: in.Mode,
		Selector: map[string]string{v1alpha1.InferenceGraphLabel: in.Graph.Name}, OwnerLabel: v1alpha1.InferenceGraphLabel}
}

// ownerFields selects a graph's children through the owner index, for the
// kinds every cluster serves (the optional kinds' informers may start after
// the index could be added).
func ownerFields(name string) map[schema.GroupVersionKind]client.MatchingFields {
	fields := map[schema.GroupVersionKind]client.MatchingFields{}
	for _, k := range registry.Kinds() {
		if !k.Optional() {
			fields[k.GVK] = client.MatchingFields{workload.OwnerIndex: name}
		}
	}
	return fields
}

func keyErrors(errs []config.KeyError) []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}
