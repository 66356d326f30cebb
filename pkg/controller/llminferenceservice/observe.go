package llminferenceservice

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
)

// observePool reads the InferencePool Serval made, or the user's own.
func (r *Reconciler) observePool(ctx context.Context, reader client.Reader, s *scope) error {
	sch := s.spec.Router
	if sch == nil || sch.Scheduler == nil || s.missing[v1alpha2.ConditionInferencePoolReady] != "" {
		return nil
	}
	name, from := presets.InferencePoolName(s.svc.Name), reader
	if p := sch.Scheduler.Pool; p.HasRef() {
		name, from = p.Ref.Name, client.Reader(r.APIReader)
	}
	pool := &igwapi.InferencePool{}
	err := from.Get(ctx, types.NamespacedName{Namespace: s.svc.Namespace, Name: name}, pool)
	switch {
	case apierrors.IsNotFound(err):
		s.pool = &cond{reason: "InferencePoolNotFound", message: fmt.Sprintf("InferencePool %s does not exist", name)}
		return nil
	case err != nil:
		return fmt.Errorf("read InferencePool %s: %w", name, err)
	}
	s.pool = poolReadiness(pool)
	return nil
}

// poolReadiness: a pool is ready when a Gateway has accepted it, and no
// parent refuses it; KServe's reasons (WaitingForGateway while no parent
// has reported, InferencePoolNotReady while one refuses).
func poolReadiness(pool *igwapi.InferencePool) *cond {
	if len(pool.Status.Parents) == 0 {
		return &cond{reason: "WaitingForGateway", message: fmt.Sprintf("Inference Pool %s/%s exists but no Gateway controller has accepted it yet", pool.Namespace, pool.Name)}
	}
	for _, p := range pool.Status.Parents {
		c := meta.FindStatusCondition(p.Conditions, string(igwapi.InferencePoolConditionAccepted))
		if c == nil || c.Status != metav1.ConditionTrue {
			why := "has not reported Accepted"
			if c != nil {
				why = fmt.Sprintf("Accepted is %s (%s: %s)", c.Status, c.Reason, c.Message)
			}
			return &cond{reason: "InferencePoolNotReady", message: fmt.Sprintf("InferencePool %s: %s %s", pool.Name, p.ParentRef.Name, why)}
		}
	}
	return &cond{ok: true, reason: "InferencePoolReady", message: fmt.Sprintf("InferencePool %s is accepted", pool.Name)}
}

// observeRoutes reads the managed route or the user's, and the Gateways
// they attach to (for GatewaysReady and the URL).
func (r *Reconciler) observeRoutes(ctx context.Context, reader client.Reader, s *scope) error {
	rt := s.spec.Router
	if rt == nil || rt.Route == nil || s.missing[v1alpha2.ConditionHTTPRoutesReady] != "" {
		return nil
	}
	var names []string
	from := reader
	if llmobjects.HasManagedRoute(s.inputs) {
		names = []string{llmobjects.RouteName(s.svc.Name)}
	} else if rt.Route.HTTP != nil {
		from = r.APIReader
		for _, ref := range rt.Route.HTTP.Refs {
			names = append(names, ref.Name)
		}
	}
	var waiting []string
	gateways := map[types.NamespacedName]bool{}
	for _, name := range names {
		route := &gatewayv1.HTTPRoute{}
		err := from.Get(ctx, types.NamespacedName{Namespace: s.svc.Namespace, Name: name}, route)
		switch {
		case apierrors.IsNotFound(err):
			waiting = append(waiting, "HTTPRoute "+name+" does not exist")
			continue
		case err != nil:
			return fmt.Errorf("read HTTPRoute %s: %w", name, err)
		}
		if why := gatewayapi.NotReady(route); why != "" {
			waiting = append(waiting, name+": "+why)
		}
		for _, p := range route.Spec.ParentRefs {
			if ptr.Deref(p.Kind, "Gateway") == "Gateway" {
				gateways[types.NamespacedName{Namespace: string(ptr.Deref(p.Namespace, gatewayv1.Namespace(s.svc.Namespace))), Name: string(p.Name)}] = true
			}
		}
	}
	s.routes = &cond{ok: true, reason: "HTTPRoutesReady", message: "every HTTPRoute is accepted by its Gateways"}
	if len(waiting) > 0 {
		s.routes = &cond{reason: "HTTPRouteNotReady", message: strings.Join(waiting, "; ")}
	}
	return r.observeGateways(ctx, s, gateways)
}

// observeGateways reads the Gateways the routes attach to: each must exist
// and be programmed; their addresses make the service's URLs.
func (r *Reconciler) observeGateways(ctx context.Context, s *scope, names map[types.NamespacedName]bool) error {
	var problems []string
	keys := slices.SortedFunc(maps.Keys(names), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	for _, key := range keys {
		gw, err := r.readGateway(ctx, s, key)
		switch {
		case err != nil:
			return err
		case gw == nil:
			problems = append(problems, "Gateway "+key.String()+" does not exist")
			continue
		}
		c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || c.Status != metav1.ConditionTrue {
			problems = append(problems, "Gateway "+key.String()+" is not programmed yet")
			continue
		}
		for _, a := range gw.Status.Addresses {
			s.addresses = append(s.addresses, v1alpha2.Address{Name: "gateway-external",
				URL: fmt.Sprintf("http://%s/%s/%s", a.Value, s.svc.Namespace, s.svc.Name)})
			break
		}
	}
	if g := s.spec.Router.Gateway; g == nil || len(g.Refs) == 0 {
		// GatewaysReady is about the Gateways the service names, as in
		// KServe: with none named, there is no such condition.
		return nil
	}
	s.gateways = &cond{ok: true, reason: "GatewaysReady", message: "every Gateway is programmed"}
	if len(problems) > 0 {
		s.gateways = &cond{reason: "GatewayNotReady", message: strings.Join(problems, "; ")}
	}
	return nil
}
