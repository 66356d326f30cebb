// Package requestmetrics counts the manager's requests to the API server by
// verb and resource.
package requestmetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// MetricName is the counter's name.
const MetricName = "serval_api_requests_total"

// apiRequests counts the manager's requests to the API server by verb and
// resource: what it costs the API server, which client-go's own
// rest_client_requests_total (by HTTP method only) does not tell. `serval
// bench` reads it.
var apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: MetricName,
	Help: "Requests the manager sent to the API server, by verb (get, list, watch, create, update, patch, delete) and resource.",
}, []string{"verb", "resource"})

// Register adds the counter to reg; call it once per process.
func Register(reg prometheus.Registerer) error { return reg.Register(apiRequests) }

// Wrap returns a copy of cfg whose transport counts every request.
func Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			verb, resource := Classify(req.Method, req.URL.Path, req.URL.Query().Get("watch") == "true")
			apiRequests.WithLabelValues(verb, resource).Inc()
			return next.RoundTrip(req)
		})
	})
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Classify names a request to the API server by its Kubernetes verb and
// resource (with its subresource, as "inferenceservices/status"), from the
// method and the path: /api/v1/namespaces/ns/pods/name,
// /apis/group/version/resource, and so on. Paths that are not resources
// (discovery, /healthz) are resource "".
func Classify(method, path string, watch bool) (verb, resource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		parts = nil
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:] // namespaced: namespaces/{ns}/{resource}/...
	}
	named := len(parts) >= 2
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource
}
