package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/serval-dev/serval/pkg/strtemplate"
)

// Ingress configures how InferenceServices are reached from outside.
type Ingress struct {
	// EnableGatewayAPI routes with Gateway API HTTPRoutes instead of
	// networking.k8s.io Ingresses (key ingress.enableGatewayApi).
	EnableGatewayAPI bool
	// Gateway is the parent Gateway of the HTTPRoutes (ingress.gateway,
	// namespace/name) and its listener (ingress.gatewaySectionName).
	Gateway            types.NamespacedName
	GatewaySectionName string
	// IngressClassName of the Ingresses; empty uses the cluster default.
	IngressClassName string
	// IngressDomain and DomainTemplate make the hosts.
	IngressDomain  string
	DomainTemplate *strtemplate.Template
	// URLScheme is http or https.
	URLScheme string
	// DisableIngressCreation creates no external routes at all.
	DisableIngressCreation bool
	// PathTemplate, when set, routes {IngressDomain}{path} to the
	// InferenceService besides its host.
	PathTemplate *strtemplate.Template
	// RequireLoadBalancerAddress makes an Ingress ready only once it has an address.
	RequireLoadBalancerAddress bool
	// IstioVirtualService says whether InferenceServices are routed with an
	// Istio VirtualService (keys ingress.enableIstioVirtualService and
	// KServe's ingress.disableIstioVirtualHost).
	IstioVirtualService IstioMode
	// IngressGateway and LocalGateway are the Istio gateways of the external
	// and the cluster-local hosts (keys ingress.ingressGateway and
	// ingress.localGateway, namespace/name).
	IngressGateway, LocalGateway types.NamespacedName
	// EnableLLMTLS serves LLMInferenceServices' model pods and endpoint
	// pickers over TLS with their self-signed certificate
	// (ingress.enableLLMInferenceServiceTLS, KServe's key; off as in KServe).
	EnableLLMTLS bool
	// LocalGatewayService is the host of the local gateway's Service
	// (ingress.localGatewayService), which Knative-mode routes go through.
	LocalGatewayService string
}

// IstioMode is when the Istio VirtualService router is used.
type IstioMode string

// The Istio modes.
const (
	// IstioAuto routes Knative-mode InferenceServices with a VirtualService
	// when the cluster has the VirtualService CRD (the default).
	IstioAuto IstioMode = "auto"
	// IstioOn routes every InferenceService with a VirtualService, Standard
	// mode included.
	IstioOn IstioMode = "on"
	// IstioOff never creates a VirtualService.
	IstioOff IstioMode = "off"
)

// NoValue is what a template renders for a label or annotation the object
// lacks, as text/template renders a missing key.
const NoValue = "<no value>"

// Meta is what the domain and path templates read of the object a host is
// for besides the name: its labels and annotations (KServe's .Labels and
// .Annotations).
type Meta struct {
	Labels, Annotations map[string]string
}

// hostData is what the domain and path templates may use: {{ .Name }},
// {{ .Namespace }}, {{ .IngressDomain }}, {{ .Labels.key }} and
// {{ .Annotations.key }}.
func (i *Ingress) hostData(name, namespace string, m Meta) strtemplate.Data {
	return strtemplate.Data{"Name": name, "Namespace": namespace, "IngressDomain": i.IngressDomain,
		"Labels": orEmpty(m.Labels), "Annotations": orEmpty(m.Annotations)}
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Host renders the domain template for name in namespace, as KServe does: a
// label or annotation the object lacks renders "<no value>", which
// HostProblems then refuses.
func (i *Ingress) Host(name, namespace string, m Meta) (string, error) {
	return i.DomainTemplate.ExecuteNoValue(i.hostData(name, namespace, m))
}

// HostProblems says why host is not a valid host name: a DNS-1123 subdomain
// of at most 253 characters whose every label fits 63 (a template may put
// the name or the namespace in any label); nil when it is valid.
func HostProblems(host string) []string {
	problems := validation.IsDNS1123Subdomain(host)
	for i, label := range strings.Split(host, ".") {
		if len(label) <= validation.DNS1123LabelMaxLength {
			continue
		}
		which := "the label"
		if i == 0 {
			which = "the first label"
		}
		problems = append(problems, fmt.Sprintf("%s %q is %d characters, over the 63 a DNS label allows", which, label, len(label)))
	}
	return problems
}

// MaxPathLength is the longest path a route may match: Gateway API's limit
// for an HTTPRoute path match.
const MaxPathLength = 1024

// PathProblems says why path, rendered from ingress.pathTemplate, cannot be
// a route's path prefix: it must start with "/", hold no whitespace or
// control character and fit MaxPathLength; nil when it can.
func PathProblems(path string) []string {
	var problems []string
	if !strings.HasPrefix(path, "/") {
		problems = append(problems, "it does not start with /")
	}
	if strings.IndexFunc(path, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		problems = append(problems, "it holds whitespace or a control character")
	}
	if len(path) > MaxPathLength {
		problems = append(problems, fmt.Sprintf("it is %d characters, over the %d a route's path allows", len(path), MaxPathLength))
	}
	return problems
}

// Path renders the path template, as Host does; "" when none is
// configured.
func (i *Ingress) Path(name, namespace string, m Meta) (string, error) {
	if i.PathTemplate == nil {
		return "", nil
	}
	return i.PathTemplate.ExecuteNoValue(i.hostData(name, namespace, m))
}

func (p *parser) ingress() Ingress {
	in := Ingress{
		EnableGatewayAPI:           p.boolean("ingress.enableGatewayApi"),
		GatewaySectionName:         p.value("ingress.gatewaySectionName"),
		IngressClassName:           p.value("ingress.ingressClassName"),
		IngressDomain:              p.nonEmpty("ingress.ingressDomain"),
		URLScheme:                  p.value("ingress.urlScheme"),
		DisableIngressCreation:     p.boolean("ingress.disableIngressCreation"),
		RequireLoadBalancerAddress: p.boolean("ingress.requireLoadBalancerAddress"),
		EnableLLMTLS:               p.boolean("ingress.enableLLMInferenceServiceTLS"),
	}
	if in.URLScheme != "http" && in.URLScheme != "https" {
		p.fail("ingress.urlScheme", in.URLScheme, "must be http or https")
	}
	in.Gateway = p.namespacedName("ingress.gateway", "a Gateway")
	in.IngressGateway = p.namespacedName("ingress.ingressGateway", "an Istio Gateway")
	in.LocalGateway = p.namespacedName("ingress.localGateway", "an Istio Gateway")
	in.LocalGatewayService = p.nonEmpty("ingress.localGatewayService")
	in.IstioVirtualService = p.istioMode()
	in.DomainTemplate = p.template("ingress.domainTemplate", func(out string) string {
		for _, msg := range validation.IsDNS1123Subdomain(out) {
			return "renders " + out + " for a sample InferenceService, not a valid host: " + msg
		}
		return ""
	})
	if p.value("ingress.pathTemplate") != "" {
		in.PathTemplate = p.template("ingress.pathTemplate", func(out string) string {
			if !strings.HasPrefix(out, "/") {
				return "renders " + out + " for a sample InferenceService; a path must start with /"
			}
			return ""
		})
	}
	return in
}

// namespacedName reads a namespace/name key.
func (p *parser) namespacedName(key, what string) types.NamespacedName {
	v := p.value(key)
	if ns, name, ok := strings.Cut(v, "/"); ok && ns != "" && name != "" && !strings.Contains(name, "/") {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	p.fail(key, v, "must be namespace/name of "+what)
	return types.NamespacedName{}
}

// istioMode reads ingress.enableIstioVirtualService (empty: auto) and
// KServe's ingress.disableIstioVirtualHost, which turns the router off.
func (p *parser) istioMode() IstioMode {
	mode := IstioAuto
	if v := p.value("ingress.enableIstioVirtualService"); v != "" {
		mode = IstioOff
		if p.boolean("ingress.enableIstioVirtualService") {
			mode = IstioOn
		}
	}
	if p.boolean("ingress.disableIstioVirtualHost") {
		if mode == IstioOn {
			p.fail("ingress.disableIstioVirtualHost", "true", "contradicts ingress.enableIstioVirtualService: true; set only one of them")
		}
		mode = IstioOff
	}
	return mode
}

// template parses a template key and checks what it renders for a sample.
func (p *parser) template(key string, check func(string) string) *strtemplate.Template {
	v := p.value(key)
	t, err := strtemplate.Parse(key, v)
	if err != nil {
		p.fail(key, v, "does not parse: "+err.Error())
		return nil
	}
	// The sample has every label and annotation the template reads (as
	// "x"), so that a typo in any other key is still refused here.
	sample := Ingress{IngressDomain: p.value("ingress.ingressDomain")}
	meta := Meta{Labels: map[string]string{}, Annotations: map[string]string{}}
	for _, f := range t.Fields() {
		if len(f) == 2 && f[0] == "Labels" {
			meta.Labels[f[1]] = "x"
		} else if len(f) == 2 && f[0] == "Annotations" {
			meta.Annotations[f[1]] = "x"
		}
	}
	out, err := t.Execute(sample.hostData("model-predictor", "default", meta))
	if err != nil {
		p.fail(key, v, "does not render: use {{ .Name }}, {{ .Namespace }}, {{ .IngressDomain }}, {{ .Labels.key }} and {{ .Annotations.key }}")
		return nil
	}
	if problem := check(out); problem != "" {
		p.fail(key, v, problem)
		return nil
	}
	return t
}
