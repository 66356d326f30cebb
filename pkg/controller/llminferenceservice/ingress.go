package llminferenceservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// observeIngresses reads the user's Ingresses that router.ingress names
// (uncached: they are not Serval's): each must exist; their hosts, else
// their load balancers' addresses, make the service's URLs. Serval never
// changes them.
func (r *Reconciler) observeIngresses(ctx context.Context, s *scope) error {
	rt := s.spec.Router
	if rt == nil || rt.Ingress == nil || len(rt.Ingress.Refs) == 0 {
		return nil
	}
	var missing []string
	for _, ref := range rt.Ingress.Refs {
		ns := ref.Namespace
		if ns == "" {
			ns = s.svc.Namespace
		}
		ing := &networkingv1.Ingress{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, ing)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, "Ingress "+ns+"/"+ref.Name+" does not exist")
			continue
		case err != nil:
			return fmt.Errorf("read Ingress %s/%s: %w", ns, ref.Name, err)
		}
		for _, url := range ingressURLs(ing) {
			s.addresses = append(s.addresses, v1alpha2.Address{Name: "ingress", URL: url})
		}
	}
	s.ingresses = &cond{ok: true, reason: "IngressesReady", message: "every Ingress exists"}
	if len(missing) > 0 {
		s.ingresses = &cond{reason: "IngressNotFound", message: strings.Join(missing, "; ")}
	}
	return nil
}

// ingressURLs are an Ingress's URLs: https for a host its TLS covers, one
// per host of its rules, else one per address of its load balancer.
func ingressURLs(ing *networkingv1.Ingress) []string {
	var out []string
	tls := func(host string) bool {
		return slices.ContainsFunc(ing.Spec.TLS, func(t networkingv1.IngressTLS) bool { return slices.Contains(t.Hosts, host) })
	}
	for _, rule := range ing.Spec.Rules {
		if rule.Host == "" {
			continue
		}
		scheme := "http"
		if tls(rule.Host) {
			scheme = "https"
		}
		out = append(out, scheme+"://"+rule.Host)
	}
	if len(out) > 0 {
		return slices.Compact(out)
	}
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if lb.Hostname != "" {
			out = append(out, "http://"+lb.Hostname)
		} else if lb.IP != "" {
			out = append(out, "http://"+lb.IP)
		}
	}
	return out
}
