package activator

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	discoveryv1ac "k8s.io/client-go/applyconfigurations/discovery/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// EndpointSlices the activator puts in front of a component at zero; the
// Kubernetes EndpointSlice controller leaves them alone, and kube-proxy and
// the Gateways route to them as to any endpoint of the Service.
const ManagedBy = "activator.serving.serval.dev"

// SliceSuffix names a component's activator EndpointSlice: {service}-activator.
const SliceSuffix = "-activator"

// Cluster is what the activator reads of the cluster and writes to it.
type Cluster struct {
	// Client reads from the activator's cache and writes.
	Client client.Client
	// Activator takes the backends and failures it learns.
	Activator *Activator
	// Hosts takes the hosts of each component.
	Hosts *Hosts
	// Self is the activator's own Service (its pods' addresses go into the
	// EndpointSlices it writes); Port the port it serves requests on.
	Self types.NamespacedName
	Port int32
}

// +kubebuilder:rbac:groups="",resources=services;pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch;create;update;patch;delete

// SetupWithManager registers two controllers of the Services labelled
// v1beta1.ScaleFromZeroLabel: on every replica, the one that keeps the
// host table, the backends and the cold-start failures; on the leader,
// the one that puts the activator in front of a component at zero and
// takes it away once a replica is ready.
func (c *Cluster) SetupWithManager(mgr ctrl.Manager) error {
	labelled := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[v1beta1.ScaleFromZeroLabel] == "true"
	}))
	toService := func(_ context.Context, o client.Object) []reconcile.Request {
		if name := o.GetLabels()[discoveryv1.LabelServiceName]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		}
		return nil
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("activator-backends").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 4}).
		For(&corev1.Service{}, labelled).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(toService)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(c.servicesOfPod)).
		Complete(reconcile.Func(c.reconcileBackend)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("activator-endpoints").
		For(&corev1.Service{}, labelled).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if o.GetNamespace() == c.Self.Namespace && o.GetLabels()[discoveryv1.LabelServiceName] == c.Self.Name {
				return c.allServices(ctx) // the activator's own pods changed
			}
			return toService(ctx, o)
		})).
		Complete(reconcile.Func(c.reconcileSlice))
}

// reconcileBackend records a component's hosts, its ready backend, and
// why its cold start fails, if it does.
func (c *Cluster) reconcileBackend(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.NamespacedName
	svc := &corev1.Service{}
	if err := c.Client.Get(ctx, key, svc); err != nil || svc.Labels[v1beta1.ScaleFromZeroLabel] != "true" {
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		c.Hosts.Delete(key)
		c.Activator.Forget(key)
		return reconcile.Result{}, nil
	}
	var extra []string
	if h := svc.Annotations[v1beta1.HostsAnnotation]; h != "" {
		extra = strings.Split(h, ",")
	}
	token := ""
	if ref := metav1.GetControllerOf(svc); ref != nil {
		token = string(ref.UID)
	}
	c.Hosts.Set(key, extra, token)
	backend, err := c.readyBackend(ctx, svc)
	if err != nil {
		return reconcile.Result{}, err
	}
	c.Activator.SetBackend(key, backend)
	if backend != "" {
		c.Activator.SetFailure(key, "")
		return reconcile.Result{}, nil
	}
	failure, err := c.coldStartFailure(ctx, svc)
	if err != nil {
		return reconcile.Result{}, err
	}
	c.Activator.SetFailure(key, failure)
	return reconcile.Result{}, nil
}

// readyBackend is the address of a ready endpoint of the Service, from
// the EndpointSlices Kubernetes keeps (not the activator's), or "".
func (c *Cluster) readyBackend(ctx context.Context, svc *corev1.Service) (string, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := c.Client.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
		return "", err
	}
	port := heldPort(svc)
	if port == nil {
		return "", nil
	}
	for _, s := range list.Items {
		i := slices.IndexFunc(s.Ports, func(p discoveryv1.EndpointPort) bool { return ptr.Deref(p.Name, "") == port.Name })
		if s.Labels[discoveryv1.LabelManagedBy] == ManagedBy || i < 0 || s.Ports[i].Port == nil {
			continue
		}
		for _, e := range s.Endpoints {
			if ptr.Deref(e.Conditions.Ready, true) && len(e.Addresses) > 0 {
				return net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*s.Ports[i].Port))), nil
			}
		}
	}
	return "", nil
}

// coldStartFailure is what keeps the Service's pods from starting (an
// image that does not pull, a crashing container), or "". A pod waiting
// for a node is not a failure: a node may come.
func (c *Cluster) coldStartFailure(ctx context.Context, svc *corev1.Service) (string, error) {
	if len(svc.Spec.Selector) == 0 {
		return "", nil
	}
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(svc.Namespace), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		return "", err
	}
	if p := workload.FirstPodProblem(pods.Items); p != nil && !p.Unschedulable() {
		return p.String(), nil
	}
	return "", nil
}

// reconcileSlice puts the activator's EndpointSlice in front of a
// component that has no ready endpoint, and removes it once one is.
func (c *Cluster) reconcileSlice(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc := &corev1.Service{}
	name := req.Name + SliceSuffix
	if err := c.Client.Get(ctx, req.NamespacedName, svc); err != nil || svc.Labels[v1beta1.ScaleFromZeroLabel] != "true" {
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, c.deleteSlice(ctx, req.Namespace, name)
	}
	backend, err := c.readyBackend(ctx, svc)
	if err != nil {
		return reconcile.Result{}, err
	}
	if backend != "" {
		return reconcile.Result{}, c.deleteSlice(ctx, req.Namespace, name)
	}
	ips, err := c.selfAddresses(ctx)
	if err != nil || len(ips) == 0 {
		return reconcile.Result{}, err // no activator ready: its slices' change enqueues again
	}
	return reconcile.Result{}, c.Client.Apply(ctx, sliceFor(svc, name, ips, c.Port), client.FieldOwner("serval-activator"), client.ForceOwnership)
}

// sliceFor is the activator's EndpointSlice for svc: its HTTP port, to the
// activator's port, on the activator's addresses.
func sliceFor(svc *corev1.Service, name string, ips []string, port int32) *discoveryv1ac.EndpointSliceApplyConfiguration {
	s := discoveryv1ac.EndpointSlice(name, svc.Namespace).
		WithLabels(map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: ManagedBy}).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Service").WithName(svc.Name).WithUID(svc.UID)).
		WithAddressType(discoveryv1.AddressTypeIPv4)
	if p := heldPort(svc); p != nil {
		s.WithPorts(discoveryv1ac.EndpointPort().WithName(p.Name).WithPort(port).WithProtocol(corev1.ProtocolTCP))
	}
	for _, ip := range ips {
		s.WithEndpoints(discoveryv1ac.Endpoint().WithAddresses(ip).WithConditions(discoveryv1ac.EndpointConditions().WithReady(true)))
	}
	return s
}

// heldPort is the Service port whose requests the activator holds: its
// first HTTP one (gRPC, h2c, is not held: refused at zero, as without the
// activator), or nil. Its backend is the endpoint port of that name.
func heldPort(svc *corev1.Service) *corev1.ServicePort {
	for i, p := range svc.Spec.Ports {
		if ptr.Deref(p.AppProtocol, "") != standard.H2CAppProtocol && p.Protocol != corev1.ProtocolUDP {
			return &svc.Spec.Ports[i]
		}
	}
	return nil
}

// selfAddresses are the ready addresses of the activator's pods.
func (c *Cluster) selfAddresses(ctx context.Context) ([]string, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := c.Client.List(ctx, list, client.InNamespace(c.Self.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: c.Self.Name}); err != nil {
		return nil, err
	}
	var ips []string
	for _, s := range list.Items {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, e := range s.Endpoints {
			if ptr.Deref(e.Conditions.Ready, true) {
				ips = append(ips, e.Addresses...)
			}
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips), nil
}

func (c *Cluster) deleteSlice(ctx context.Context, namespace, name string) error {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the EndpointSlice %s/%s: %w", namespace, name, err)
	}
	return nil
}

// servicesOfPod are the labelled Services that select the pod.
func (c *Cluster) servicesOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	list := &corev1.ServiceList{}
	if err := c.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{v1beta1.ScaleFromZeroLabel: "true"}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, s := range list.Items {
		if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(o.GetLabels())) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return out
}

// allServices are every labelled Service.
func (c *Cluster) allServices(ctx context.Context) []reconcile.Request {
	list := &corev1.ServiceList{}
	if err := c.Client.List(ctx, list, client.MatchingLabels{v1beta1.ScaleFromZeroLabel: "true"}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i, s := range list.Items {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}
	}
	return out
}
