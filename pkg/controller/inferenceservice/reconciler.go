package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// Reconciler reconciles InferenceServices.
type Reconciler struct {
	Client client.Client
	// APIReader reads uncached: only the ServiceAccounts and their storage
	// Secrets, which the cache must not hold cluster-wide.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Config    *config.Store
	// KnativeFeatures reads Knative's config-features, in KnativeNamespace.
	KnativeFeatures  *knative.FeaturesStore
	KnativeNamespace string
	Applier          *apply.Applier
	// Concurrency is the number of InferenceServices reconciled at once.
	Concurrency int
	// ImageVolumes answers whether OCI models can be mounted as image
	// volumes; nil: never (the native mode is refused).
	ImageVolumes *ImageVolumes

	pipeline    *pipeline.Pipeline
	credentials *credentials.Memo
	caBundles   *cabundle.Copier
	status      *statuswriter.Writer[v1beta1.InferenceServiceStatus]
	// templateFailures counts the services whose hosts or paths the
	// ingress templates cannot render validly.
	templateFailures templateFailures
}

// +kubebuilder:rbac:groups=serving.serval.dev,resources=inferenceservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=inferenceservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=servingruntimes;clusterservingruntimes;clusterstoragecontainers,verbs=get;list;watch
// The child kinds' rules sit next to their registration (package childkinds).
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch,namespace=serval-system
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch,resourceNames=config-features
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch,resourceNames=storage-config
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ConflictRecheckInterval is how often an InferenceService blocked by a
// conflicting object looks again whether the object is still there.
const ConflictRecheckInterval = 10 * time.Second

// SecretRecheckInterval is how often an InferenceService looks again for
// a storage Secret of its own name (the storageSecretName annotation) that
// does not exist yet; the Secrets named storage-config are watched.
var SecretRecheckInterval = 15 * time.Second

// StaleRetryInterval is when a reconcile whose write was refused for a
// stale read (409 Conflict: another writer came first) runs again, if no
// watch event has brought it sooner.
const StaleRetryInterval = pipeline.StaleRetryInterval

// Reconcile brings one InferenceService's children and status in line with
// its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	isvc := &v1beta1.InferenceService{}
	if err := r.Client.Get(ctx, req.NamespacedName, isvc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetOwner(req.Namespace, req.Name)
			r.status.Forget(req.NamespacedName)
			r.templateFailures.record(req.NamespacedName, false)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if isvc.DeletionTimestamp != nil {
		// Children carry owner references; garbage collection deletes them.
		return ctrl.Result{}, nil
	}
	s := newScope(isvc)
	err := r.reconcileChildren(ctx, s)
	statusErr := r.writeStatus(ctx, s)
	if apierrors.IsConflict(statusErr) && err == nil {
		// The status was written over by someone else since the cache read
		// it: retry on the next version, quietly (with the queue's backoff).
		s.staleRead, statusErr = true, nil
	}
	if statusErr != nil {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	if err == nil {
		err = s.out.RetryError()
	}
	if err == nil && s.failure != nil && s.failure.Reason == v1beta1.ReasonConflict {
		// The conflicting object carries no Serval label, so it is neither
		// cached nor watched: look again later, to notice when it is gone.
		return ctrl.Result{RequeueAfter: ConflictRecheckInterval}, nil
	}
	if err == nil && s.recheckSecret {
		// Only the Secrets named storage-config are watched.
		return ctrl.Result{RequeueAfter: SecretRecheckInterval}, nil
	}
	if err == nil && s.staleRead {
		// The other writer's change brings a watch event anyway; the
		// requeue only covers its loss.
		log.FromContext(ctx).V(1).Info("Another writer came first; retrying on the newer version")
		return ctrl.Result{RequeueAfter: StaleRetryInterval}, nil
	}
	// A user mistake is in the status and waits for a watch event (spec,
	// runtime or config change): no error, no requeue. Only transient errors
	// are returned, and retried with backoff.
	return ctrl.Result{}, err
}

// phase is a step of reconcileChildren.
type phase struct {
	name string
	run  func(context.Context, *scope) error
}

// reconcileChildren runs the phases up to and including apply.
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) error {
	if s.isvc.DecodeError != "" {
		// Nothing can be rendered from a spec that did not decode; status
		// says so, and a fix (a spec change) brings the next reconcile.
		return nil
	}
	phases := []phase{
		{"load config", r.loadConfig},
		{"validate", r.validate},
		{"select runtime", r.selectRuntime},
		{"read canaries", r.readCanaries},
		{"resolve components", r.resolveComponents},
		{"split revision", r.splitRevision},
		{"plan routes", r.planRoutes},
		{"apply children", r.runChildren},
	}
	if s.stopped {
		// Nothing is rendered, so the pipeline prunes every child.
		phases = []phase{{"load config", r.loadConfig}, {"remove children", r.runChildren}}
	}
	for _, p := range phases {
		if err := p.run(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if s.stop {
			return nil
		}
	}
	s.reconciled = true
	return nil
}
