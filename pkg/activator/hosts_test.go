package activator

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestHosts: a request names its component by the route's header, when it
// carries the component's token (its Service owner's UID), or by its host,
// with any port and case; a host two components claim names neither. A
// header without the token (a client naming another tenant's component)
// is ignored: the host decides.
func TestHosts(t *testing.T) {
	h := NewHosts()
	iris := Key{Namespace: "team-a", Name: "iris-predictor"}
	other := Key{Namespace: "team-b", Name: "iris-predictor"}
	h.Set(iris, []string{"iris-team-a.example.com", " Shared.Example.com "}, "uid-iris")
	h.Set(other, []string{"shared.example.com"}, "uid-other")
	llm := Key{Namespace: "team-c", Name: "llama-kserve-workload-svc"}
	h.Set(llm, nil, "uid-llama")
	h.Set(Key{Namespace: "team-d", Name: "ownerless"}, nil, "")

	cases := []struct {
		host, header string
		want         Key
		ok           bool
	}{
		{host: "iris-team-a.example.com", want: iris, ok: true},
		{host: "IRIS-team-a.example.com:8080", want: iris, ok: true},
		{host: "iris-predictor.team-a.svc.cluster.local", want: iris, ok: true},
		{host: "iris-predictor.team-b", want: other, ok: true},
		{host: "iris-predictor.team-a.svc.cluster.local.", want: iris, ok: true},
		{host: "shared.example.com"}, // two components claim it
		{host: "iris-predictor"},     // no namespace: ambiguous in the cluster
		{host: "unknown.example.com"},
		{host: "10.0.0.10", header: "team-c/llama-kserve-workload-svc/uid-llama", want: llm, ok: true},
		{host: "iris-team-a.example.com", header: "team-c/llama-kserve-workload-svc/uid-llama", want: llm, ok: true},
		{host: "10.0.0.10", header: "team-c/not-served/uid-llama"},
		{host: "10.0.0.10", header: "team-c/llama-kserve-workload-svc"},                                     // no token
		{host: "10.0.0.10", header: "team-c/llama-kserve-workload-svc/uid-iris"},                            // another's token
		{host: "10.0.0.10", header: "team-d/ownerless/"},                                                    // a component with no token takes no header
		{host: "iris-team-a.example.com", header: "team-c/llama-kserve-workload-svc", want: iris, ok: true}, // a forged header: the host decides
		{host: "iris-team-a.example.com", header: "team-x/nothing", want: iris, ok: true},
	}
	for _, c := range cases {
		r := &http.Request{Host: c.host, Header: http.Header{}}
		if c.header != "" {
			r.Header.Set(v1beta1.ComponentHeader, c.header)
		}
		got, ok := h.Resolve(r)
		assert.Equal(t, c.ok, ok, "%s %s", c.host, c.header)
		if c.ok {
			assert.Equal(t, c.want, got, "%s %s", c.host, c.header)
		}
	}
	h.Delete(other)
	got, ok := h.Resolve(&http.Request{Host: "shared.example.com"})
	assert.True(t, ok, "claimed by one component once the other is gone")
	assert.Equal(t, iris, got)
}
