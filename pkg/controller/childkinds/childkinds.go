// Package childkinds is the registry of every kind of child object Serval
// makes: the deployment modes and routers (and the choice among them), the
// kinds each declares, and the kinds only LLMInferenceServices and the
// model caches make. The kind type itself (package kinds) sits below the
// modes and routers that declare kinds, and this table above them. The cache filters, the
// watches, the optional-CRD handling, the RBAC rules (checked by a test) and
// the prune step all derive from it: adding a kind is one registration in
// the mode or router that creates it.
package childkinds

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/istio"
	"github.com/serval-dev/serval/pkg/controller/ingress/knativeroute"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// modeEntry is a deployment mode and how routes reach it.
type modeEntry struct {
	mode workload.Mode
	// ownRoutes routes external InferenceServices of the mode when no other
	// router is chosen: Knative routes its Services itself; nil means the
	// configured Ingress or Gateway API router.
	ownRoutes ingress.Router
	// istio is the Istio router for the mode.
	istio istio.Router
}

var modes = []modeEntry{
	{mode: standard.Mode{}, istio: istio.Router{}},
	{mode: knative.Mode{}, ownRoutes: knativeroute.Router{}, istio: istio.Router{ViaLocalGateway: true}},
}

// routers are every router, for their kinds.
var routers = []ingress.Router{kubeingress.Router{}, gatewayapi.Router{}, istio.Router{}, knativeroute.Router{}, ingress.None{}}

// Mode returns the implementation of a deployment mode (Standard for an
// unknown one: validation has rejected it before).
func Mode(m v1beta1.DeploymentMode) workload.Mode {
	return entry(m).mode
}

func entry(m v1beta1.DeploymentMode) modeEntry {
	for _, e := range modes {
		if e.mode.Name() == m {
			return e
		}
	}
	return modes[0]
}

// All returns every kind of child object of every mode, router and owner
// kind, each once, in a fixed order.
func All() []kinds.Kind { return of(true, true) }

// OfServices returns the kinds of child object an InferenceService or an
// InferenceGraph may have (its modes' and routers'), or with llm, an
// LLMInferenceService: for readers who look for one service's children.
func OfServices(llm bool) []kinds.Kind { return of(llm, false) }

func of(llm, caches bool) []kinds.Kind {
	var out []kinds.Kind
	seen := map[string]bool{}
	add := func(ks []kinds.Kind) {
		for _, k := range ks {
			if !seen[k.GVK.String()] {
				seen[k.GVK.String()] = true
				out = append(out, k)
			}
		}
	}
	for _, e := range modes {
		add(e.mode.Kinds())
	}
	for _, r := range routers {
		add(r.Kinds())
	}
	if llm {
		// The kinds only an LLMInferenceService creates (its workloads,
		// Services and routes are the modes' and routers' kinds).
		add(llmobjects.Kinds())
	}
	if caches {
		// The volumes, claims and agents of the model cache kinds.
		add(cacheobjects.Kinds())
	}
	return out
}

// Router chooses the router of one reconcile: Istio when the config asks for
// it (by default in Knative mode whenever the VirtualService CRD exists);
// none when ingress creation is disabled or the InferenceService is
// cluster-local; Knative's own routes in Knative mode; else Gateway API or
// Ingress, as configured. present reports whether a kind's CRD exists.
func Router(m v1beta1.DeploymentMode, cfg *config.Ingress, clusterLocal bool, present func(kinds.Kind) bool) ingress.Router {
	e := entry(m)
	if cfg.DisableIngressCreation {
		return ingress.None{}
	}
	switch cfg.IstioVirtualService {
	case config.IstioOn:
		return e.istio
	case config.IstioAuto:
		if e.ownRoutes != nil && present(istio.VirtualServiceKind) {
			return e.istio
		}
	}
	switch {
	case clusterLocal:
		return ingress.None{}
	case e.ownRoutes != nil:
		return e.ownRoutes
	case cfg.EnableGatewayAPI:
		return gatewayapi.Router{}
	}
	return kubeingress.Router{}
}
