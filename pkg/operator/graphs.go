package operator

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/inferencegraph"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
	"github.com/serval-dev/serval/pkg/version"
)

// DefaultRouterImage is the image of InferenceGraph routers when neither
// the manager's flag nor serval-config names one.
func DefaultRouterImage() string {
	return "ghcr.io/serval-dev/serval-manager:" + version.Version
}

// setupGraphs registers the InferenceGraph controller. A graph's children
// carry the graph label, not the InferenceService label the manager's cache
// selects on, so they live in a cache of their own: a small one, with the
// same lean transform, that the manager starts before the controllers.
func setupGraphs(ctx context.Context, mgr manager.Manager, o Options, isvc *inferenceservice.Reconciler) error {
	children, err := cluster.New(mgr.GetConfig(), func(co *cluster.Options) {
		co.Scheme = mgr.GetScheme()
		co.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mgr.GetRESTMapper(), nil }
		co.Cache = graphCacheOptions(o)
		co.Client = client.Options{Cache: &client.CacheOptions{Unstructured: true}}
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(children); err != nil {
		return err
	}
	image := o.RouterImage
	if image == "" {
		image = DefaultRouterImage()
	}
	r := &inferencegraph.Reconciler{
		Client: mgr.GetClient(), Children: children.GetClient(),
		Applier:  apply.New(children.GetClient(), mgr.GetAPIReader(), sharedMetrics()),
		Recorder: isvc.Recorder, Config: isvc.Config, KnativeFeatures: isvc.KnativeFeatures,
		RouterImage: image, GraphLimits: o.graphLimits(),
	}
	return r.SetupWithManager(ctx, mgr, children)
}

func graphCacheOptions(o Options) cache.Options {
	return cache.Options{DefaultTransform: leanTransform, DefaultLabelSelector: labelExists(v1alpha1.InferenceGraphLabel), DefaultNamespaces: watchedNamespaces(o),
		DefaultWatchErrorHandler: o.listErrors.handler}
}
