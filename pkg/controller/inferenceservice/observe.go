package inferenceservice

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/workload/standard"
)

// observation is what the cache shows of one component's children.
type observation struct {
	deployment *appsv1.Deployment
	pods       []corev1.Pod
}

// observe reads each component's Deployment and Pods from the cache.
func (r *Reconciler) observe(ctx context.Context, s *scope) error {
	s.observed = map[v1beta1.ComponentType]*observation{}
	for _, c := range s.comps {
		obs := &observation{}
		dep := &appsv1.Deployment{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace(), Name: c.Name}, dep)
		switch {
		case err == nil:
			obs.deployment = dep
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("get Deployment %s: %w", c.Name, err)
		}
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(c.Namespace()), client.MatchingLabels(standard.SelectorLabels(c))); err != nil {
			return fmt.Errorf("list pods of %s: %w", c.Name, err)
		}
		obs.pods = pods.Items
		s.observed[c.Type] = obs
	}
	return r.observeRoutes(ctx, s)
}
