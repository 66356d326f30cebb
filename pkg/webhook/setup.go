package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// Setup registers the webhooks with the manager's webhook server.
//
// The runtime webhooks read the other runtimes from the API server, not
// from the cache: two conflicting runtimes applied one after the other (one
// `kubectl apply` of a file with both) would otherwise both be admitted
// whenever the cache had not yet seen the first. Runtimes change rarely, so
// the uncached list costs little.
func Setup(mgr ctrl.Manager, store *config.Store, graphLimits v1alpha1.GraphLimits) error {
	isvc := &InferenceService{Config: store, Reader: mgr.GetClient()}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1beta1.InferenceService{}).WithDefaulter(isvc).WithValidator(countRefusals("InferenceService", isvc)).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ServingRuntime{}).WithValidator(countRefusals("ServingRuntime", &ServingRuntime{Reader: mgr.GetAPIReader(), Config: store})).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.InferenceGraph{}).WithValidator(countRefusals("InferenceGraph", InferenceGraph{Limits: graphLimits})).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha2.LLMInferenceService{}).WithDefaulter(LLMInferenceService{}).WithValidator(countRefusals("LLMInferenceService", LLMInferenceService{Config: store, Reviewer: mgr.GetClient()})).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha2.LLMInferenceServiceConfig{}).WithValidator(countRefusals("LLMInferenceServiceConfig", LLMInferenceServiceConfig{Config: store, Reviewer: mgr.GetClient()})).Complete(); err != nil {
		return err
	}
	caches := localModelCaches{Reader: mgr.GetAPIReader(), Services: mgr.GetClient()}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.LocalModelCache{}).WithValidator(countRefusals("LocalModelCache", LocalModelCache{Caches: caches})).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.LocalModelNamespaceCache{}).WithValidator(countRefusals("LocalModelNamespaceCache", LocalModelNamespaceCache{Caches: caches})).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.LocalModelNodeGroup{}).WithValidator(countRefusals("LocalModelNodeGroup", LocalModelNodeGroup{Caches: caches})).Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ClusterServingRuntime{}).WithValidator(countRefusals("ClusterServingRuntime", &ClusterServingRuntime{Reader: mgr.GetAPIReader(), Config: store})).Complete()
}
