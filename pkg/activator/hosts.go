package activator

import (
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
}

// NewHosts returns an empty table.
func NewHosts() *Hosts {
	return &Hosts{byHost: map[string]map[Key]struct{}{}, byKey: map[Key][]string{}}
}

// Set records the component's hosts (its Service's DNS names are added),
// replacing those it had.
func (h *Hosts) Set(key Key, extra []string) {
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
}

// Resolve names the component a request is for: by the component header
// its route sets (v1beta1.ComponentHeader, for a component the table
// holds), else by its Host (without the port, any case).
func (h *Hosts) Resolve(r *http.Request) (Key, bool) {
	if v := r.Header.Get(v1beta1.ComponentHeader); v != "" {
		ns, name, _ := strings.Cut(v, "/")
		key := Key{Namespace: ns, Name: name}
		h.mu.RLock()
		_, known := h.byKey[key]
		h.mu.RUnlock()
		return key, known
	}
	host := r.Host
	if name, _, err := net.SplitHostPort(host); err == nil {
		host = name
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	h.mu.RLock()
	defer h.mu.RUnlock()
	keys := h.byHost[host]
	if len(keys) != 1 {
		return Key{}, false
	}
	for k := range keys {
		return k, true
	}
	return Key{}, false
}
