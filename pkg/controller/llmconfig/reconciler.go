package llmconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceserviceconfigs,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceserviceconfigs/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceserviceconfigs/finalizers,verbs=update

// The reasons of a preset's conditions.
const (
	ReasonValid           = "Valid"
	ReasonInvalidSpec     = "InvalidSpec"
	ReasonUndecodable     = "UndecodableSpec"
	ReasonInUse           = "InUse"
	ReasonNotInUse        = "NotInUse"
	ReasonDeletionBlocked = "DeletionBlocked"
)

// Reconciler keeps each preset's status and finalizer.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Namespace is Serval's, where the well-known presets are.
	Namespace string

	status *statuswriter.Writer[v1alpha2.LLMInferenceServiceConfigStatus]
}

// Reconcile writes a preset's status, and lets a deleted one go once no
// service uses it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := &v1alpha2.LLMInferenceServiceConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			r.status.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	users, err := r.users(ctx, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Only a preset in use carries the finalizer: one no service uses goes
	// at once, even when Serval is not running. The chart's own presets
	// are Helm's to remove (helm uninstall waits for them) and are never
	// held.
	hold := len(users) > 0 && !r.bundled(cfg)
	deleting := cfg.DeletionTimestamp != nil
	if deleting && !hold {
		return ctrl.Result{}, r.setFinalizer(ctx, cfg, false)
	}
	if !deleting {
		if err := r.setFinalizer(ctx, cfg, hold); err != nil {
			return ctrl.Result{}, err
		}
	}
	orig := cfg.DeepCopy()
	written, err := r.status.Write(ctx, cfg, orig, Status(cfg, users))
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("write the status of LLMInferenceServiceConfig %s: %w", req.NamespacedName, err)
	}
	if written && deleting && !blocked(orig) {
		r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, ReasonDeletionBlocked, "Delete", "%s", deletionWaits(users))
	}
	return ctrl.Result{}, nil
}

// Status is a preset's status: Ready from admission's checks of what is
// stored, ConfigInUse and the services that use it.
func Status(cfg *v1alpha2.LLMInferenceServiceConfig, users []v1alpha2.UntypedObjectReference) v1alpha2.LLMInferenceServiceConfigStatus {
	gen := cfg.Generation
	ready := metav1.Condition{Type: v1alpha2.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonValid,
		Message: "the preset passes admission's checks", ObservedGeneration: gen}
	if cfg.DecodeError != "" {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonUndecodable, "the stored spec does not decode: "+cfg.DecodeError
	} else if errs := v1alpha2.ValidateConfig(cfg); len(errs) > 0 {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, ReasonInvalidSpec,
			"the stored preset fails admission's checks (it was stored before they applied): "+errs.ToAggregate().Error()
	}
	inUse := metav1.Condition{Type: v1alpha2.ConditionConfigInUse, Status: metav1.ConditionFalse, Reason: ReasonNotInUse,
		Message: "no LLMInferenceService uses the preset", ObservedGeneration: gen}
	switch {
	case len(users) > 0 && cfg.DeletionTimestamp != nil:
		inUse.Status, inUse.Reason = metav1.ConditionTrue, ReasonDeletionBlocked
		inUse.Message = deletionWaits(users)
	case len(users) > 0:
		inUse.Status, inUse.Reason = metav1.ConditionTrue, ReasonInUse
		inUse.Message = fmt.Sprintf("used by %d LLMInferenceService(s): %s", len(users), named(users))
	}
	st := v1alpha2.LLMInferenceServiceConfigStatus{}
	meta.SetStatusCondition(&st.Conditions, ready)
	meta.SetStatusCondition(&st.Conditions, inUse)
	if len(users) > 0 {
		// The shipped presets are used by every service of the cluster: the
		// list is bounded, so that many users cannot take a preset's
		// status past what the API server stores (1.5 MiB), and the
		// condition gives their count.
		st.ReferencedBy = users[:min(len(users), MaxReferencedBy)]
	}
	return st
}

// MaxReferencedBy bounds status.referencedBy: the first users, in order of
// namespace and name.
const MaxReferencedBy = 100

// BundledLabel marks the objects the chart installs (runtimes, storage
// containers, presets); in Serval's namespace, a preset that carries it is
// the chart's.
const BundledLabel = "serving.serval.dev/bundled"

// bundled reports whether the preset is one the chart installed: in
// Serval's namespace, labelled so (a tenant cannot write there).
func (r *Reconciler) bundled(cfg *v1alpha2.LLMInferenceServiceConfig) bool {
	return cfg.Namespace == r.Namespace && cfg.Labels[BundledLabel] == "true"
}

// deletionWaits says that a deleted preset waits for its users, naming
// the first of them.
func deletionWaits(users []v1alpha2.UntypedObjectReference) string {
	return fmt.Sprintf("the deletion waits until no LLMInferenceService uses the preset; %d do: %s", len(users), named(users))
}

// blocked reports whether the status already says the deletion waits.
func blocked(cfg *v1alpha2.LLMInferenceServiceConfig) bool {
	c := meta.FindStatusCondition(cfg.Status.Conditions, v1alpha2.ConditionConfigInUse)
	return c != nil && c.Reason == ReasonDeletionBlocked
}

// setFinalizer adds or removes the preset's finalizer. A preset deleted
// before Serval added it (before a service used it) is not held.
func (r *Reconciler) setFinalizer(ctx context.Context, cfg *v1alpha2.LLMInferenceServiceConfig, want bool) error {
	if controllerutil.ContainsFinalizer(cfg, v1alpha2.ConfigFinalizer) == want {
		return nil
	}
	patch := client.MergeFromWithOptions(cfg.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if want {
		controllerutil.AddFinalizer(cfg, v1alpha2.ConfigFinalizer)
	} else {
		controllerutil.RemoveFinalizer(cfg, v1alpha2.ConfigFinalizer)
	}
	if err := r.Client.Patch(ctx, cfg, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}
