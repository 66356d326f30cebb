package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// Setup registers the webhooks with the manager's webhook server.
func Setup(mgr ctrl.Manager, store *config.Store) error {
	isvc := &InferenceService{Config: store}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1beta1.InferenceService{}).WithDefaulter(isvc).WithValidator(isvc).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ServingRuntime{}).WithValidator(&ServingRuntime{Reader: mgr.GetClient()}).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.InferenceGraph{}).WithValidator(InferenceGraph{}).Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ClusterServingRuntime{}).WithValidator(&ClusterServingRuntime{Reader: mgr.GetClient()}).Complete()
}
