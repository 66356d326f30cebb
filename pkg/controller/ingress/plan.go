package ingress

import (
	"fmt"
	"slices"
	"strings"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// ServicePort is the port of every component Service that routes target.
const ServicePort = 80

// Plan is where an InferenceService is reached: resolved hosts, paths and
// backends, the input of every Router.
type Plan struct {
	// Owner is the InferenceService; route objects carry its name and
	// namespace and its owner reference.
	Owner owner.Ref
	// External is false for cluster-local InferenceServices and when ingress
	// creation is disabled: no external route is created.
	External bool
	// Top is the top-level route: to the transformer when there is one, else
	// the predictor; ":explain" requests go to the explainer when there is one.
	Top Route
	// Explainer is the explainer's route, or nil.
	Explainer *Route
	// Components are the per-component routes, predictor first.
	Components []Route
	// Labels go on every route object.
	Labels map[string]string
	// Config is the ingress configuration the plan was made with.
	Config *config.Ingress
	// Canary: the spec splits the predictor's traffic (spec.canary, or
	// canaryTrafficPercent in Standard mode), which a router that cannot
	// weight backends refuses.
	Canary bool
}

// Route is one host (or domain + path prefix) to one component's Service.
type Route struct {
	Component v1beta1.ComponentType
	Host      string
	// PathPrefix is set for path-based routing ("" routes the whole host).
	PathPrefix string
	// Service is the component's Service (or Knative Service) name.
	Service string
	// TimeoutSeconds is the component's request timeout, if set.
	TimeoutSeconds *int64
	// URL is the external URL of the route.
	URL string
	// ClusterHost is the Service's cluster-local host name, and ClusterURL
	// its URL.
	ClusterHost, ClusterURL string
	// Splits are shares of the route's traffic sent to other Services (the
	// predictor's canaries, ready ones only); Service takes the rest.
	Splits []Backend
}

// Backend is a share of a route's traffic sent to a Service.
type Backend struct {
	// Service is the Service's name, and ClusterHost its cluster-local host.
	Service, ClusterHost string
	// Percent is the share, 0 to 100.
	Percent int32
}

// Remainder is the share of the route's traffic its own Service takes.
func (r *Route) Remainder() int32 {
	rest := int32(100)
	for _, b := range r.Splits {
		rest -= b.Percent
	}
	return rest
}

// SplitPredictor sends each ready split's share of the predictor's
// traffic to the split's Service: on the predictor's route, and on the
// top-level one when it leads to the predictor (a transformer's requests
// keep going to the stable predictor, as in KServe).
func (p *Plan) SplitPredictor(splits []*components.Component) {
	var backends []Backend
	for _, c := range splits {
		if c.Split.Ready {
			backends = append(backends, Backend{Service: c.Name, ClusterHost: ClusterHost(c.Name, c.Namespace()), Percent: c.Split.Percent})
		}
	}
	if len(backends) == 0 {
		return
	}
	for i := range p.Components {
		if p.Components[i].Component == v1beta1.PredictorComponent {
			p.Components[i].Splits = backends
		}
	}
	if p.Top.Component == v1beta1.PredictorComponent {
		p.Top.Splits = backends
	}
}

// MakePlan computes the routes of an InferenceService's components; meta
// is its labels and annotations, which the domain and path templates may
// read.
func MakePlan(o owner.Ref, meta config.Meta, clusterLocal bool, comps []*components.Component, cfg *config.Ingress) (*Plan, error) {
	p := &Plan{
		Owner:    o,
		External: !clusterLocal && !cfg.DisableIngressCreation,
		Labels:   map[string]string{v1beta1.InferenceServiceLabel: o.Name},
		Config:   cfg,
	}
	var top *components.Component
	for _, c := range comps {
		r, err := componentRoute(c, meta, p.External, cfg)
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
		}
	}
	if top == nil {
		return nil, fmt.Errorf("no predictor to route to")
	}
	for i := range p.Components {
		if p.Components[i].Component == v1beta1.ExplainerComponent {
			p.Explainer = &p.Components[i]
		}
	}
	route, err := topRoute(o, meta, top.Type, top.Name, top.Extension.TimeoutSeconds, p.External, cfg)
	if err != nil {
		return nil, err
	}
	p.Top = route
	return p, nil
}

func componentRoute(c *components.Component, meta config.Meta, external bool, cfg *config.Ingress) (Route, error) {
	host, err := renderHost(cfg, c.Name, c.Namespace(), meta)
	if err != nil {
		return Route{}, err
	}
	clusterHost := ClusterHost(c.Name, c.Namespace())
	r := Route{Component: c.Type, Host: host, Service: c.Name, TimeoutSeconds: c.Extension.TimeoutSeconds,
		URL: cfg.URLScheme + "://" + host, ClusterHost: clusterHost, ClusterURL: "http://" + clusterHost}
	if !external {
		r.URL = r.ClusterURL
	}
	return r, nil
}

// HostError is a host the domain template (or a path the path template)
// renders for this owner that a route cannot take (a long name in a long
// namespace, say).
type HostError struct {
	// Template is the serval-config key: ingress.domainTemplate or
	// ingress.pathTemplate.
	Template string
	// Host is what it rendered: a host, or a path.
	Host     string
	Problems []string
}

// What is what the template rendered: "host", or "path".
func (e *HostError) What() string {
	if e.Template == "ingress.pathTemplate" {
		return "path"
	}
	return "host"
}

// Error names the template, what it rendered, why that is invalid (with the
// limit) and how to fix it.
func (e *HostError) Error() string {
	what := e.What()
	if strings.Contains(e.Host, config.NoValue) {
		return fmt.Sprintf("%s reads a label or annotation the object does not have (the %s renders as %q): add it, or change the template",
			e.Template, what, e.Host)
	}
	return fmt.Sprintf("%s renders the %s %q, which is not a valid %s: %s; shorten the name or the namespace, or change the template",
		e.Template, what, e.Host, what, strings.Join(e.Problems, "; "))
}

// renderHost renders the domain template for name and checks the host.
func renderHost(cfg *config.Ingress, name, namespace string, meta config.Meta) (string, error) {
	host, err := cfg.Host(name, namespace, meta)
	if err != nil {
		return "", fmt.Errorf("render ingress.domainTemplate for %s: %w", name, err)
	}
	if problems := config.HostProblems(host); len(problems) > 0 {
		return "", &HostError{Template: "ingress.domainTemplate", Host: host, Problems: problems}
	}
	return host, nil
}

// ClusterHost is the cluster-local host name of a Service.
func ClusterHost(name, namespace string) string {
	return name + "." + namespace + ".svc.cluster.local"
}

// ObjectLabels are the labels of a route object of one component (or of the
// top-level route, with the component it targets).
func (p *Plan) ObjectLabels(component v1beta1.ComponentType) map[string]string {
	labels := make(map[string]string, len(p.Labels)+1)
	for k, v := range p.Labels {
		labels[k] = v
	}
	labels[v1beta1.ComponentLabel] = string(component)
	return labels
}

// MakeSinglePlan computes the plan of an owner with a single workload, its
// Service named as the owner (an InferenceGraph's router): a top-level
// route only.
func MakeSinglePlan(o owner.Ref, meta config.Meta, component v1beta1.ComponentType, clusterLocal bool, timeoutSeconds *int64, labels map[string]string, cfg *config.Ingress) (*Plan, error) {
	p := &Plan{Owner: o, External: !clusterLocal && !cfg.DisableIngressCreation, Labels: labels, Config: cfg}
	top, err := topRoute(o, meta, component, o.Name, timeoutSeconds, p.External, cfg)
	if err != nil {
		return nil, err
	}
	p.Top = top
	return p, nil
}

// topRoute is the owner's top-level route, at the owner's host (or the
// shared domain and the owner's path), to the Service service.
func topRoute(o owner.Ref, meta config.Meta, component v1beta1.ComponentType, service string, timeoutSeconds *int64, external bool, cfg *config.Ingress) (Route, error) {
	host, err := renderHost(cfg, o.Name, o.Namespace, meta)
	if err != nil {
		return Route{}, err
	}
	path, err := cfg.Path(o.Name, o.Namespace, meta)
	if err != nil {
		return Route{}, fmt.Errorf("render ingress.pathTemplate: %w", err)
	}
	if problems := config.PathProblems(path); path != "" && len(problems) > 0 {
		return Route{}, &HostError{Template: "ingress.pathTemplate", Host: path, Problems: problems}
	}
	clusterHost := ClusterHost(service, o.Namespace)
	r := Route{Component: component, Host: host, Service: service, TimeoutSeconds: timeoutSeconds,
		URL: cfg.URLScheme + "://" + host, ClusterHost: clusterHost, ClusterURL: "http://" + clusterHost}
	if path != "" {
		// Path-based routing: the shared ingress domain, this path.
		r.Host, r.PathPrefix = cfg.IngressDomain, path
		r.URL = cfg.URLScheme + "://" + cfg.IngressDomain + path
	}
	if !external {
		r.URL = r.ClusterURL
	}
	return r, nil
}

// HostsOf are the hosts whose requests reach component t's Service: its
// own route's, the top-level route's when it leads there, the
// explainer's, and their cluster-local names.
func (p *Plan) HostsOf(t v1beta1.ComponentType) []string {
	var hosts []string
	add := func(r *Route) {
		if r == nil || r.Component != t {
			return
		}
		for _, h := range []string{r.Host, r.ClusterHost} {
			if h != "" && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	add(&p.Top)
	add(p.Explainer)
	for i := range p.Components {
		add(&p.Components[i])
	}
	return hosts
}
