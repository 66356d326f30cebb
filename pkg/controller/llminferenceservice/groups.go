package llminferenceservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// The services of a routing group are found through this index of the
// cache: {namespace}/{group}.
const groupIndex = "spec.router.route.group"

// GroupFinalizer keeps a member of a routing group until no other member's
// route sends it traffic, so that deleting it drops no request.
const GroupFinalizer = "serving.serval.dev/routing-group"

// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceservices,verbs=patch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=llminferenceservices/finalizers,verbs=update

func groupKey(svc *v1alpha2.LLMInferenceService) string {
	if g := svc.Spec.Router.RoutingGroup(); g != "" {
		return svc.Namespace + "/" + g
	}
	return ""
}

func indexGroup(obj client.Object) []string {
	svc, ok := obj.(*v1alpha2.LLMInferenceService)
	if !ok || groupKey(svc) == "" {
		return nil
	}
	return []string{groupKey(svc)}
}

// groupMembers lists the services of key's group, from the cache.
func (r *Reconciler) groupMembers(ctx context.Context, key string) ([]v1alpha2.LLMInferenceService, error) {
	list := &v1alpha2.LLMInferenceServiceList{}
	ns, _, _ := strings.Cut(key, "/")
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{groupIndex: key}); err != nil {
		return nil, fmt.Errorf("list the routing group %s: %w", key, err)
	}
	return list.Items, nil
}

// resolveGroup finds the members the service's route splits its traffic
// among: itself and every other member that takes traffic, those serving
// the same models; the others diverge.
func (r *Reconciler) resolveGroup(ctx context.Context, s *scope) error {
	key := groupKey(s.defaulted)
	if key == "" {
		return nil
	}
	list, err := r.groupMembers(ctx, key)
	if err != nil {
		return err
	}
	self := llmobjects.Member(s.defaulted)
	members := []llmobjects.GroupMember{self}
	for i := range list {
		m := &list[i]
		if m.Name == s.svc.Name || !llmobjects.Listed(m) {
			continue
		}
		d := m.DeepCopy()
		v1alpha2.Default(d)
		members = append(members, llmobjects.Member(d))
	}
	s.group, s.divergent = llmobjects.SplitGroup(self, members)
	s.inputs.Group = s.group
	return nil
}

// finalize lets a deleted member of a group go once no other member's route
// sends it traffic; until then GroupReady says whom it waits for.
func (r *Reconciler) finalize(ctx context.Context, s *scope) (waiting bool, err error) {
	if !controllerutil.ContainsFinalizer(s.svc, GroupFinalizer) {
		return false, nil
	}
	if key := groupKey(s.defaulted); key != "" {
		list, err := r.groupMembers(ctx, key)
		if err != nil {
			return false, err
		}
		own := llmobjects.Member(s.defaulted).Backend.Name
		for i := range list {
			m := &list[i]
			if m.Name == s.svc.Name || m.DeletionTimestamp != nil {
				continue
			}
			route := &gatewayv1.HTTPRoute{}
			if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: llmobjects.RouteName(m.Name)}, route); err != nil {
				if client.IgnoreNotFound(err) != nil {
					return false, err
				}
				continue
			}
			if sendsTo(route, own) {
				s.groupWait = m.Name
				return true, nil
			}
		}
	}
	return false, r.setFinalizer(ctx, s.svc, GroupFinalizer, false)
}

// sendsTo reports whether a route has a backend of that name.
func sendsTo(route *gatewayv1.HTTPRoute, name gatewayv1.ObjectName) bool {
	return slices.ContainsFunc(route.Spec.Rules, func(rule gatewayv1.HTTPRouteRule) bool {
		return slices.ContainsFunc(rule.BackendRefs, func(b gatewayv1.HTTPBackendRef) bool { return b.Name == name })
	})
}

// setFinalizer adds or removes a finalizer, as a merge patch of the
// finalizers alone.
func (r *Reconciler) setFinalizer(ctx context.Context, svc *v1alpha2.LLMInferenceService, finalizer string, on bool) error {
	if controllerutil.ContainsFinalizer(svc, finalizer) == on {
		return nil
	}
	orig := svc.DeepCopy()
	if on {
		controllerutil.AddFinalizer(svc, finalizer)
	} else {
		controllerutil.RemoveFinalizer(svc, finalizer)
	}
	if err := r.Client.Patch(ctx, svc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update the finalizers of %s: %w", svc.Name, err)
	}
	return nil
}

// groupFanOut re-enqueues the other members of a service's group, and of
// the group it left, when what the group routes changes: a member comes or
// goes, its route, model or presets change, it starts or stops taking
// traffic.
type groupFanOut struct{ r *Reconciler }

func (h groupFanOut) Create(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.enqueue(ctx, e.Object, nil, q)
}

func (h groupFanOut) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	old, ok1 := e.ObjectOld.(*v1alpha2.LLMInferenceService)
	updated, ok2 := e.ObjectNew.(*v1alpha2.LLMInferenceService)
	if ok1 && ok2 && trafficChanged(old, updated) {
		h.enqueue(ctx, updated, old, q)
	}
}

func (h groupFanOut) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.enqueue(ctx, e.Object, nil, q)
}

func (groupFanOut) Generic(context.Context, event.TypedGenericEvent[client.Object], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (h groupFanOut) enqueue(ctx context.Context, obj client.Object, old *v1alpha2.LLMInferenceService, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	svc, ok := obj.(*v1alpha2.LLMInferenceService)
	if !ok {
		return
	}
	keys := []string{groupKey(svc)}
	if old != nil && groupKey(old) != keys[0] {
		keys = append(keys, groupKey(old))
	}
	for _, key := range keys {
		if key == "" {
			continue
		}
		members, err := h.r.groupMembers(ctx, key)
		if err != nil {
			continue // the cache lists without failing; nothing to retry
		}
		for _, m := range members {
			if m.Name != svc.Name {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
			}
		}
	}
}

// trafficChanged reports whether an update changes how the group routes:
// deletion, stopping, the router, the model, the presets, or whether the
// member takes traffic.
func trafficChanged(old, updated *v1alpha2.LLMInferenceService) bool {
	return (old.DeletionTimestamp == nil) != (updated.DeletionTimestamp == nil) ||
		v1alpha2.IsStopped(old) != v1alpha2.IsStopped(updated) ||
		!equality.Semantic.DeepEqual(old.Spec.Router, updated.Spec.Router) ||
		!equality.Semantic.DeepEqual(old.Spec.Model, updated.Spec.Model) ||
		!slices.Equal(old.Spec.BaseRefs, updated.Spec.BaseRefs) ||
		llmobjects.Routable(old) != llmobjects.Routable(updated) ||
		!equality.Semantic.DeepEqual(statusPool(old), statusPool(updated))
}

func statusPool(svc *v1alpha2.LLMInferenceService) *v1alpha2.ObjectReference {
	if svc.Status.Router == nil || svc.Status.Router.Scheduler == nil {
		return nil
	}
	return svc.Status.Router.Scheduler.InferencePool
}

var _ handler.TypedEventHandler[client.Object, reconcile.Request] = groupFanOut{}
