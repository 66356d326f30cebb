package operator

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/serval-dev/serval/pkg/controller/inferencegraph"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/version"
)

// DefaultRouterImage is the image of InferenceGraph routers when neither
// the manager's flag nor serval-config names one.
func DefaultRouterImage() string {
	return "ghcr.io/serval-dev/serval-manager:" + version.Version
}

// setupLocalModels registers the controllers of the model cache kinds and
// of their downloads.
// The agent runs from the manager's own image (which holds its binary)
// unless serval-config names another.
func setupLocalModels(ctx context.Context, mgr manager.Manager, o Options, isvc *inferenceservice.Reconciler) error {
	image := o.RouterImage
	if image == "" {
		image = DefaultRouterImage()
	}
	for _, namespaced := range []bool{false, true} {
		r := &localmodel.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Applier: isvc.Applier, Recorder: isvc.Recorder, Config: isvc.Config, Namespaced: namespaced}
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return err
		}
	}
	d := &localmodel.Downloads{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: isvc.Recorder, Config: isvc.Config}
	if err := d.SetupWithManager(mgr); err != nil {
		return err
	}
	g := &localmodel.GroupReconciler{Client: mgr.GetClient(), Applier: isvc.Applier, Recorder: isvc.Recorder, Config: isvc.Config,
		Namespace: o.Namespace, AgentImage: image}
	return g.SetupWithManager(ctx, mgr)
}

// setupGraphs registers the InferenceGraph controller. A graph's children
// live in the manager's cache with the InferenceServices' (both carry the
// component label the cache selects on).
func setupGraphs(ctx context.Context, mgr manager.Manager, o Options, isvc *inferenceservice.Reconciler) error {
	image := o.RouterImage
	if image == "" {
		image = DefaultRouterImage()
	}
	r := &inferencegraph.Reconciler{
		Client: mgr.GetClient(), Applier: isvc.Applier,
		Recorder: isvc.Recorder, Config: isvc.Config, KnativeFeatures: isvc.KnativeFeatures,
		RouterImage: image, GraphLimits: o.graphLimits(),
	}
	return r.SetupWithManager(ctx, mgr)
}
