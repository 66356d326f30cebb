package console

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// clients makes the client of one request. The REST mapping (discovery)
// and the connection pool are shared; the credentials are the request's.
type clients struct {
	config *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// own reads with the configured credentials: the local user's, or the
	// console's own (namespace names only).
	own client.WithWatch
	// forwarded is the credential-less transport a forwarded token is put
	// on; nil in AuthLocal.
	forwarded http.RoundTripper
	ownHTTP   *http.Client
}

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta1.AddToScheme, v1alpha1.AddToScheme, v1alpha2.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func newClients(cfg *rest.Config, forwarded bool) (*clients, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	ownHTTP, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client for %s: %w", cfg.Host, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, ownHTTP)
	if err != nil {
		return nil, err
	}
	c := &clients{config: cfg, scheme: scheme, mapper: mapper, ownHTTP: ownHTTP}
	c.own, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme, Mapper: mapper, HTTPClient: ownHTTP})
	if err != nil {
		return nil, err
	}
	if forwarded {
		// The server's address and CA, none of the console's credentials.
		c.forwarded, err = rest.TransportFor(rest.AnonymousClientConfig(cfg))
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// forToken returns the client that reads as the request's user: the
// configured credentials locally (token ""), the forwarded token else.
func (c *clients) forToken(token string) (client.WithWatch, error) {
	if c.forwarded == nil {
		return c.own, nil
	}
	hc := &http.Client{Transport: transport.NewBearerAuthRoundTripper(token, c.forwarded)}
	return client.NewWithWatch(rest.AnonymousClientConfig(c.config), client.Options{Scheme: c.scheme, Mapper: c.mapper, HTTPClient: hc})
}
