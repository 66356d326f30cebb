package router

import (
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// headerFilter picks the request headers passed on to steps.
type headerFilter struct {
	exact    []string
	prefixes []string
}

func newHeaderFilter(names []string) headerFilter {
	var f headerFilter
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
		case strings.HasSuffix(n, "*"):
			f.prefixes = append(f.prefixes, http.CanonicalHeaderKey(strings.TrimSuffix(n, "*")))
		default:
			f.exact = append(f.exact, http.CanonicalHeaderKey(n))
		}
	}
	return f
}

// hopByHop are the headers that describe one connection or one message's
// framing (RFC 9110 7.6.1, RFC 9112): they never pass to a step, whatever
// the propagation list says, or a client could frame the step's request.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, "Host": true, "Expect": true, "Http2-Settings": true,
}

// stepHeader returns the headers of a step's request: Content-Type (the
// request's, or JSON) and the propagated headers of in whose names and
// values are valid HTTP. The server refuses invalid ones before they get
// here; checking again keeps a step safe from any path that did not.
func (f headerFilter) stepHeader(in http.Header) http.Header {
	out := make(http.Header, 2+len(f.exact))
	ct := jsonType
	if v := in["Content-Type"]; len(v) > 0 && httpguts.ValidHeaderFieldValue(v[0]) {
		ct = v[0]
	}
	out["Content-Type"] = []string{ct}
	out["User-Agent"] = userAgent
	hop := connectionOptions(in)
	for _, name := range f.exact {
		f.copy(out, name, in[name], hop)
	}
	if len(f.prefixes) == 0 {
		return out
	}
	for name, values := range in {
		for _, p := range f.prefixes {
			if strings.HasPrefix(name, p) {
				f.copy(out, name, values, hop)
				break
			}
		}
	}
	return out
}

// connectionOptions are the headers the request's Connection header names:
// they describe the client's connection to the router (RFC 9110 7.6.1), so
// a proxy removes them before it forwards; nil when there are none.
func connectionOptions(in http.Header) map[string]bool {
	var out map[string]bool
	for _, v := range in["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				if out == nil {
					out = map[string]bool{}
				}
				out[http.CanonicalHeaderKey(name)] = true
			}
		}
	}
	return out
}

func (headerFilter) copy(out http.Header, name string, values []string, hop map[string]bool) {
	if len(values) == 0 || hopByHop[name] || hop[name] || name == "Content-Type" || !httpguts.ValidHeaderFieldName(name) {
		return
	}
	for _, v := range values {
		if httpguts.ValidHeaderFieldValue(v) {
			out[name] = append(out[name], v)
		}
	}
}

var userAgent = []string{"serval-router"}
