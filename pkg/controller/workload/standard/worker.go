package standard

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// workerObjects are a multi-node predictor's worker Deployment and the
// headless Services of its head and worker pods, as KServe makes them: the
// workers' rolling update keeps every old pod until the new ones are
// ready (no pod unavailable, all surge), and the Services publish pods
// before they are ready, since the nodes must find each other to become
// ready.
func workerObjects(c *components.Component) ([]apply.Object, error) {
	w := c.Worker
	// The workers serve nothing: they are ready when their own probes say
	// so, with no default probe on a serving port.
	template, err := PodTemplateOf(w.Name, w.Pod, w.Labels, w.Annotations, 0)
	if err != nil {
		return nil, err
	}
	zero, all := intstr.FromString("0%"), intstr.FromString("100%")
	dep := appsv1ac.Deployment(w.Name, c.Namespace()).
		WithLabels(w.Labels).WithAnnotations(w.Annotations).
		WithOwnerReferences(c.Owner.Reference()).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(w.Replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(w.Selector)).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxUnavailable(zero).WithMaxSurge(all))).
			WithTemplate(template))
	headless := func(name, role string, selector map[string]string) apply.Object {
		labels := maps.Clone(c.Labels)
		labels[components.MultiNodeRoleLabel] = role
		sel := maps.Clone(selector)
		sel[components.GenerationLabel] = w.Generation
		return apply.Object{GVK: ServiceKind.GVK, Key: types.NamespacedName{Namespace: c.Namespace(), Name: name},
			Spec: corev1ac.Service(name, c.Namespace()).WithLabels(labels).WithOwnerReferences(c.Owner.Reference()).
				WithSpec(corev1ac.ServiceSpec().WithClusterIP(corev1.ClusterIPNone).WithPublishNotReadyAddresses(true).WithSelector(sel))}
	}
	return []apply.Object{
		{GVK: DeploymentKind.GVK, Key: types.NamespacedName{Namespace: c.Namespace(), Name: w.Name}, Spec: dep},
		headless(w.HeadService, "head", c.Selector),
		headless(w.WorkerService, "worker", w.Selector),
	}, nil
}

// observeWorker reads the worker Deployment: the predictor serves once it
// is available too (a head without its workers cannot load the model).
func observeWorker(ctx context.Context, r client.Reader, c *components.Component, st *workload.State) error {
	if c.Worker == nil || c.Worker.Replicas == 0 {
		return nil
	}
	dep := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace(), Name: c.Worker.Name}, dep)
	switch {
	case apierrors.IsNotFound(err):
		dep = nil
	case err != nil:
		return fmt.Errorf("get Deployment %s: %w", c.Worker.Name, err)
	}
	ok, msg := available(dep)
	if !ok && st.Available {
		st.Available, st.NotAvailableMessage = false, fmt.Sprintf("the worker Deployment %s is not available: %s", c.Worker.Name, msg)
	}
	if done, _ := rolledOut(dep); !done {
		st.RolledOut = false
	}
	return nil
}
