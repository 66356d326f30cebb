package ingress

import (
	"fmt"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/components"
)

// ServicePort is the port of every component Service that routes target.
const ServicePort = 80

// Plan is where an InferenceService is reached.
type Plan struct {
	ISVC *v1beta1.InferenceService
	// External is false for cluster-local InferenceServices and when ingress
	// creation is disabled: no route is created.
	External bool
	// Top is the top-level route: to the transformer when there is one, else
	// the predictor; ":explain" requests go to the explainer when there is one.
	Top Route
	// ExplainerService is the explainer's Service, or "".
	ExplainerService string
	// Components are the per-component routes, predictor first.
	Components []Route
	// Labels go on every route object.
	Labels map[string]string
}

// Route is one host (or domain + path prefix) to one Service.
type Route struct {
	Component v1beta1.ComponentType
	Host      string
	// PathPrefix is set for path-based routing ("" routes the whole host).
	PathPrefix string
	Service    string
	// TimeoutSeconds is the component's request timeout, if set.
	TimeoutSeconds *int64
	// URL is the external URL of the route.
	URL string
	// ClusterURL is the Service's cluster-local URL.
	ClusterURL string
}

// MakePlan computes the routes of an InferenceService.
func MakePlan(isvc *v1beta1.InferenceService, comps []*components.Component, cfg *config.Ingress) (*Plan, error) {
	p := &Plan{
		ISVC:     isvc,
		External: !v1beta1.IsClusterLocal(isvc) && !cfg.DisableIngressCreation,
		Labels:   map[string]string{v1beta1.InferenceServiceLabel: isvc.Name},
	}
	var top *components.Component
	for _, c := range comps {
		r, err := componentRoute(c, cfg)
		if err != nil {
			return nil, err
		}
		p.Components = append(p.Components, r)
		switch c.Type {
		case v1beta1.TransformerComponent:
			top = c
		case v1beta1.PredictorComponent:
			if top == nil {
				top = c
			}
		case v1beta1.ExplainerComponent:
			p.ExplainerService = c.Name
		}
	}
	if top == nil {
		return nil, fmt.Errorf("no predictor to route to")
	}
	host, err := cfg.Host(isvc.Name, isvc.Namespace)
	if err != nil {
		return nil, fmt.Errorf("render ingress.domainTemplate: %w", err)
	}
	path, err := cfg.Path(isvc.Name, isvc.Namespace)
	if err != nil {
		return nil, fmt.Errorf("render ingress.pathTemplate: %w", err)
	}
	p.Top = Route{Component: top.Type, Host: host, Service: top.Name, TimeoutSeconds: top.Extension.TimeoutSeconds,
		URL: cfg.URLScheme + "://" + host, ClusterURL: ClusterURL(top)}
	if path != "" {
		// Path-based routing: the shared ingress domain, this path.
		p.Top.Host, p.Top.PathPrefix = cfg.IngressDomain, path
		p.Top.URL = cfg.URLScheme + "://" + cfg.IngressDomain + path
	}
	if !p.External {
		p.Top.URL = p.Top.ClusterURL
	}
	return p, nil
}

func componentRoute(c *components.Component, cfg *config.Ingress) (Route, error) {
	host, err := cfg.Host(c.Name, c.Namespace())
	if err != nil {
		return Route{}, fmt.Errorf("render ingress.domainTemplate for %s: %w", c.Name, err)
	}
	r := Route{Component: c.Type, Host: host, Service: c.Name, TimeoutSeconds: c.Extension.TimeoutSeconds,
		URL: cfg.URLScheme + "://" + host, ClusterURL: ClusterURL(c)}
	if v1beta1.IsClusterLocal(c.Owner) || cfg.DisableIngressCreation {
		r.URL = r.ClusterURL
	}
	return r, nil
}

// ClusterURL is a component Service's cluster-local URL.
func ClusterURL(c *components.Component) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local", c.Name, c.Namespace())
}
