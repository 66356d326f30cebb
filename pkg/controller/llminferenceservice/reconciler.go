package llminferenceservice

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/statuswriter"
	"github.com/serval-dev/serval/pkg/storage"
)

// Reconciler reconciles LLMInferenceServices.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads uncached: what the user brings (a pool, routes, the
	// Gateways a route attaches to).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Config    *config.Store
	Applier   *apply.Applier
	// Namespace is Serval's: the well-known presets live there.
	Namespace string
	// Concurrency is the number of services reconciled at once (1 when 0).
	Concurrency int

	pipeline *pipeline.Pipeline
	status   *statuswriter.Writer[v1alpha2.LLMInferenceServiceStatus]
	certs    *servingcert.Keeper
	// credentials are the download credentials of the model pods'
	// ServiceAccounts.
	credentials *credentials.Memo
	caBundles   *cabundle.Copier
	// groupWaits counts, by service, the checks a deleted routing-group
	// member has made in a row while another member still routes to it.
	groupWaits groupWaits
}

// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceservices;llminferenceserviceconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways,verbs=get

// Reconcile brings one LLMInferenceService's children and status in line
// with its spec and presets.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	svc := &v1alpha2.LLMInferenceService{}
	if err := r.Client.Get(ctx, req.NamespacedName, svc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetOwner(req.Namespace, req.Name)
			r.status.Forget(req.NamespacedName)
			r.certs.Forget(types.NamespacedName{Namespace: req.Namespace, Name: llmobjects.CertificateName(req.Name)})
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if svc.DeletionTimestamp != nil {
		// The children carry owner references, but for the picker's
		// cluster binding; a member of a routing group waits for the
		// others' routes to leave it.
		if err := r.deleteBindings(ctx, svc); err != nil {
			return ctrl.Result{}, err
		}
		return r.reconcileDeletion(ctx, newScope(svc))
	}
	if err := r.setFinalizer(ctx, svc, GroupFinalizer, groupKey(svc) != ""); err != nil {
		return ctrl.Result{}, err
	}
	s := newScope(svc)
	err := r.reconcileChildren(ctx, s)
	if err != nil && !s.reportable() {
		// A transient error (the API server could not be read) before
		// anything was rendered: nothing new to report, and the status
		// keeps its last values; retried with backoff.
		return ctrl.Result{}, err
	}
	if statusErr := r.writeStatus(ctx, s); statusErr != nil {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	res, err := s.out.Result(err)
	if err == nil && s.refsInvalid != "" && res.RequeueAfter == 0 {
		// Gateways are not watched (they are not Serval's): a missing one
		// is looked for again.
		res.RequeueAfter = GatewayRecheckInterval
	}
	if err == nil && s.accountMissing && res.RequeueAfter == 0 {
		// ServiceAccounts are not watched: a missing one is looked for
		// again.
		res.RequeueAfter = ServiceAccountRecheckInterval
	}
	return res, err
}

// GatewayRecheckInterval is how often a service whose router.gateway.refs
// name a missing Gateway looks for it again.
const GatewayRecheckInterval = 30 * time.Second

// reconcileDeletion lets a deleted service go: at once, or once no other
// member of its routing group routes to it. The other members' routes are
// not watched on its behalf: it looks again after a delay that doubles with
// each look (groupWaitDelay), and whenever a member's traffic changes (the
// group's watch enqueues every member).
func (r *Reconciler) reconcileDeletion(ctx context.Context, s *scope) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: s.svc.Namespace, Name: s.svc.Name}
	waiting, err := r.finalize(ctx, s)
	if err != nil || !waiting {
		if err == nil {
			r.groupWaits.done(key)
		}
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{RequeueAfter: groupWaitDelay(r.groupWaits.next(key))}, nil
}

// groupWaitDelay is the wait before a deleted member's n-th look (from 0):
// one second, doubling up to a minute, so that a member whose group's
// route is stuck costs a look a minute, not one a second for ever.
func groupWaitDelay(n int) time.Duration {
	return min(time.Second<<min(n, 6), time.Minute)
}

// groupWaits counts looks by service.
type groupWaits struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

// next returns how many looks key made before, and counts this one.
func (g *groupWaits) next(key types.NamespacedName) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == nil {
		g.n = map[types.NamespacedName]int{}
	}
	n := g.n[key]
	g.n[key] = n + 1
	return n
}

// done forgets key.
func (g *groupWaits) done(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.n, key)
}

// reconcileChildren runs the steps up to and including observing. A user's
// mistake ends in the scope (a condition); only a transient error returns.
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) error {
	if s.svc.DecodeError != "" {
		s.fail(v1alpha2.ConditionReady, "UndecodableSpec", "the stored spec does not decode, so Serval leaves the children as they are: "+
			s.svc.DecodeError+"; fix the field (kubectl edit) or delete the LLMInferenceService")
		return nil
	}
	_, errs := v1alpha2.Validate(s.defaulted, nil)
	if errs = append(errs, storage.CheckURIs(v1alpha2.StorageURIs(&s.defaulted.Spec))...); len(errs) > 0 {
		s.fail(v1alpha2.ConditionPresetsCombined, "InvalidSpec", errs.ToAggregate().Error())
		return nil
	}
	cfg, _, err := r.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	if cfg == nil {
		s.fail(v1alpha2.ConditionPresetsCombined, "InvalidConfig", "serval-config is invalid and no earlier version was valid")
		return nil
	}
	if err := r.combine(ctx, s, cfg); err != nil || s.failed() {
		return err
	}
	s.authDelegator = cfg.PickerAuthDelegator
	req := pipeline.Request{Owner: s.owner()}
	if s.stopped {
		// Nothing is rendered, so the run prunes every child (the
		// binding's producer prunes the cluster binding); the routing
		// group still lists the service, as stopped.
		if err := r.resolveGroup(ctx, s); err != nil {
			return err
		}
		req.Producers = []pipeline.Producer{bindingProducer{s: s}}
	} else {
		cert, ok, err := r.prepare(ctx, s, cfg)
		if err != nil || !ok {
			return err
		}
		req.Producers = r.producers(s, cert)
	}
	if wantsBinding(s) {
		// Before the binding exists: only the finalizer deletes it.
		if err := r.setFinalizer(ctx, s.svc, BindingFinalizer, true); err != nil {
			return err
		}
	}
	s.out, err = r.pipeline.Run(ctx, req)
	if err == nil && !wantsBinding(s) && len(s.out.ApplyFailures) == 0 {
		// The run pruned any binding: nothing left for the finalizer.
		err = r.setFinalizer(ctx, s.svc, BindingFinalizer, false)
	}
	return err
}

// BindingFinalizer keeps a service whose picker may hold a cluster binding
// (llmobjects.AuthDelegatorBinding) until the binding is deleted: a
// cluster-scoped object is not deleted with a namespaced owner. KServe's
// is serving.kserve.io/llmisvc-finalizer.
const BindingFinalizer = "serving.serval.dev/llmisvc-finalizer"

// deleteBindings deletes the service's cluster bindings, then lets the
// service go.
func (r *Reconciler) deleteBindings(ctx context.Context, svc *v1alpha2.LLMInferenceService) error {
	if !controllerutil.ContainsFinalizer(svc, BindingFinalizer) {
		return nil
	}
	if _, err := r.Applier.Prune(ctx, llmobjects.AuthDelegatorScope(svc), nil); err != nil {
		return fmt.Errorf("delete the cluster binding of %s: %w", svc.Name, err)
	}
	return r.setFinalizer(ctx, svc, BindingFinalizer, false)
}

// fmtApplied lists the applied presets, for messages.
func fmtApplied(refs []v1alpha2.AppliedConfigRef) string {
	out := ""
	for i, ref := range refs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s:%s/%s", ref.Source, ref.Namespace, ref.Name)
	}
	return out
}
