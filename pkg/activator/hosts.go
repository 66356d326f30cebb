package activator

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Hosts maps the hosts requests name to the components that serve them:
// each scale-from-zero Service's DNS names in the cluster and the hosts
// its routes receive (v1beta1.HostsAnnotation). A host two components
// claim resolves to neither (a 404 that says so), never to a guess.
type Hosts struct {
	mu     sync.RWMutex
	byHost map[string]map[Key]struct{}
	byKey  map[Key][]string
	// tokens are what a route's component header carries after the
	// component's name, by component (see Resolve).
	tokens map[Key]string
}

// NewHosts returns an empty table.
func NewHosts() *Hosts {
	return &Hosts{byHost: map[string]map[Key]struct{}{}, byKey: map[Key][]string{}, tokens: map[Key]string{}}
}

// Set records the component's hosts (its Service's DNS names are added)
// and the token its route's component header carries (the UID of the
// Service's owner; "" accepts no header), replacing those it had.
func (h *Hosts) Set(key Key, extra []string, token string) {
	hosts := []string{key.Name + "." + key.Namespace, key.Name + "." + key.Namespace + ".svc",
		key.Name + "." + key.Namespace + ".svc.cluster.local"}
	for _, e := range extra {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			hosts = append(hosts, e)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(key)
	for _, host := range hosts {
		if h.byHost[host] == nil {
			h.byHost[host] = map[Key]struct{}{}
		}
		h.byHost[host][key] = struct{}{}
	}
	h.byKey[key] = hosts
	if token != "" {
		h.tokens[key] = token
	}
}

// Delete forgets the component.
func (h *Hosts) Delete(key Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(key)
}

func (h *Hosts) drop(key Key) {
	for _, host := range h.byKey[key] {
		delete(h.byHost[host], key)
		if len(h.byHost[host]) == 0 {
			delete(h.byHost, host)
		}
	}
	delete(h.byKey, key)
	delete(h.tokens, key)
}

// Resolve names the component a request is for: by the component header
// Serval's own route sets (v1beta1.ComponentHeader), when it carries the
// component's token, else by its Host (without the port, any case). The
// token is the UID of the object that owns the component's Service, which
// only those who may read that object (or its route) know: a client
// cannot name another tenant's component by the header, and one whose
// header does not match is resolved by its Host as if it sent none.
func (h *Hosts) Resolve(r *http.Request) (Key, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if key, ok := h.byHeader(r.Header.Get(v1beta1.ComponentHeader)); ok {
		return key, true
	}
	host := r.Host
	if name, _, err := net.SplitHostPort(host); err == nil {
		host = name
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	keys := h.byHost[host]
	if len(keys) != 1 {
		return Key{}, false
	}
	for k := range keys {
		return k, true
	}
	return Key{}, false
}

// byHeader is the component a header value ({namespace}/{name}/{token})
// names, when the token is the component's. h.mu is held.
func (h *Hosts) byHeader(v string) (Key, bool) {
	if v == "" {
		return Key{}, false
	}
	ns, rest, _ := strings.Cut(v, "/")
	name, token, _ := strings.Cut(rest, "/")
	key := Key{Namespace: ns, Name: name}
	want, known := h.tokens[key]
	if !known || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return Key{}, false
	}
	return key, true
}
