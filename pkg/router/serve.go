package router

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Handler serves a graph over HTTP: every request but the health checks
// (GET /readyz and GET /livez) enters the root node.
type Handler struct {
	graph     *Graph
	metrics   *Metrics
	propagate headerFilter
	draining  atomic.Bool
}

// NewHandler returns the handler of a compiled graph; m may be nil.
func NewHandler(g *Graph, o Options, m *Metrics) *Handler {
	return &Handler{graph: g, metrics: m, propagate: newHeaderFilter(o.PropagateHeaders)}
}

// Drain makes readiness fail, so that the router is taken out of its
// Service before it shuts down.
func (h *Handler) Drain() { h.draining.Store(true) }

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// ServeHTTP implements http.Handler: the path of HTTP/2 (h2c) requests
// and of any server other than Server.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && h.health(r.URL.Path, httpResponder{w}) {
		return
	}
	h.serve(r.Context(), r.Header, r.Body, r.ContentLength, httpResponder{w})
}

// health answers the health checks, GET /readyz and GET /livez; it reports
// whether path was one.
func (h *Handler) health(path string, out responder) bool {
	switch {
	case path == "/readyz" && h.draining.Load():
		out.respond(http.StatusServiceUnavailable, "text/plain", []byte("shutting down"), nil, -1)
	case path == "/readyz" || path == "/livez":
		out.respond(http.StatusOK, "text/plain", []byte("ok"), nil, -1)
	default:
		return false
	}
	return true
}

// responder writes a response: a body of bytes, or a stream of length
// bytes (-1: unknown).
type responder interface {
	respond(status int, contentType string, body []byte, stream io.Reader, length int64)
}

// serve routes one request through the graph and writes the answer.
func (h *Handler) serve(ctx context.Context, header http.Header, body io.Reader, length int64, out responder) {
	start := time.Now()
	if h.graph.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.graph.timeout)
		defer cancel()
	}
	in := &input{header: header}
	if h.graph.root.streams {
		in.stream, in.length = body, length
	} else {
		buf := buffers.Get().(*bytes.Buffer)
		buf.Reset()
		defer buffers.Put(buf)
		if _, err := buf.ReadFrom(body); err != nil {
			h.fail(out, start, &Error{Status: http.StatusBadRequest, Message: "read the request body: " + err.Error()})
			return
		}
		in.body = buf.Bytes()
	}
	rep, err := h.run(ctx, h.graph.root, in, true)
	if err != nil {
		h.fail(out, start, asError(err))
		return
	}
	if rep.stream != nil {
		out.respond(rep.status, rep.contentType, nil, rep.stream, rep.length)
		_ = rep.stream.Close()
	} else {
		out.respond(rep.status, rep.contentType, rep.body, nil, int64(len(rep.body)))
	}
	h.metrics.request(start, rep.status)
}

func (h *Handler) fail(out responder, start time.Time, e *Error) {
	body := e.JSON()
	out.respond(e.Status, jsonType, body, nil, int64(len(body)))
	h.metrics.request(start, e.Status)
}

// httpResponder writes through net/http.
type httpResponder struct{ w http.ResponseWriter }

func (r httpResponder) respond(status int, contentType string, body []byte, stream io.Reader, _ int64) {
	switch contentType {
	case "":
	case jsonType:
		r.w.Header()["Content-Type"] = jsonContentType
	default:
		r.w.Header()["Content-Type"] = []string{contentType}
	}
	r.w.WriteHeader(status)
	if stream == nil {
		_, _ = r.w.Write(body)
		return
	}
	copyStream(r.w, stream)
}

// copyStream copies a streaming body with a pooled buffer. It reports
// whether the body was copied whole.
func copyStream(w io.Writer, stream io.Reader) bool {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Grow(32 << 10)
	p := buf.AvailableBuffer()[:32<<10]
	defer buffers.Put(buf)
	for {
		n, err := stream.Read(p)
		if n > 0 {
			if _, werr := w.Write(p[:n]); werr != nil {
				return false
			}
		}
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// jsonType is the content type of nearly every response; jsonContentType
// is it as a header value, shared so that setting it allocates nothing.
const jsonType = "application/json"

var jsonContentType = []string{jsonType}

// run routes in through node n. stream asks for the reply's body left
// streaming when it is the answer to the client.
func (h *Handler) run(ctx context.Context, n *node, in *input, stream bool) (*reply, error) {
	switch n.typ {
	case v1alpha1.Sequence:
		return h.sequence(ctx, n, in, stream)
	case v1alpha1.Splitter:
		return h.call(ctx, n, n.steps[pick(n.cumulative)], in, stream)
	case v1alpha1.Switch:
		if !gjson.ValidBytes(in.body) {
			return nil, &Error{Status: http.StatusBadRequest, Node: n.name, Message: "the request is not JSON, so no condition of the Switch can match it"}
		}
		for _, s := range n.steps {
			if s.condition == "" || Match(in.body, s.condition) {
				return h.call(ctx, n, s, in, stream)
			}
		}
		return nil, &Error{Status: http.StatusNotFound, Node: n.name, Message: "no step's condition matches the request"}
	case v1alpha1.Ensemble:
		return h.ensemble(ctx, n, in)
	}
	return nil, &Error{Status: http.StatusInternalServerError, Node: n.name, Message: "unknown router type " + string(n.typ)}
}

// pick chooses a Splitter's step at random by weight.
func pick(cumulative []int64) int {
	r := rand.Int64N(100)
	for i, c := range cumulative {
		if r < c {
			return i
		}
	}
	return len(cumulative) - 1
}

// sequence calls the steps in order. A step gets the node's request, or the
// previous step's response ($response). A step with a condition runs only
// if the condition matches the previous response (the request, for the
// first step); otherwise the sequence ends with what it has. A Hard step
// that fails ends the sequence with its failure; a Soft one does not.
func (h *Handler) sequence(ctx context.Context, n *node, in *input, stream bool) (*reply, error) {
	var prev *reply
	for i, s := range n.steps {
		last := i == len(n.steps)-1
		if s.condition != "" {
			data, subject := in.body, "the request"
			if prev != nil {
				data, subject = prev.body, "the response of step "+n.steps[i-1].name
			}
			if !gjson.ValidBytes(data) {
				return nil, &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name,
					Message: subject + " is not JSON, so the step's condition cannot match it"}
			}
			if !Match(data, s.condition) {
				if prev == nil {
					return nil, &Error{Status: http.StatusNotFound, Node: n.name, Step: s.name, Message: "the first step's condition does not match the request"}
				}
				return prev, nil
			}
		}
		stepIn := in
		if s.response && prev != nil {
			stepIn = &input{body: prev.body, header: in.header}
		}
		rep, err := h.call(ctx, n, s, stepIn, stream && last)
		if err != nil {
			if s.hard {
				return nil, err
			}
			rep = asError(err).reply()
		}
		if s.hard && rep.status/100 != 2 {
			return rep, nil
		}
		if !last {
			if _, err := rep.bytes(); err != nil {
				return nil, stepFailure(ctx, n, s, err)
			}
		}
		prev = rep
	}
	return prev, nil
}

// ensemble calls every step at once and answers a JSON object with each
// step's response under its name. A Hard step that fails fails the node; a
// Soft one's failure is its entry.
func (h *Handler) ensemble(ctx context.Context, n *node, in *input) (*reply, error) {
	results := make([]*reply, len(n.steps))
	errs := make([]error, len(n.steps))
	var wg sync.WaitGroup
	for i := 1; i < len(n.steps); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.call(ctx, n, n.steps[i], in, false)
		}()
	}
	results[0], errs[0] = h.call(ctx, n, n.steps[0], in, false)
	wg.Wait()
	out := make([]byte, 0, 256)
	out = append(out, '{')
	for i, s := range n.steps {
		rep, err := results[i], errs[i]
		switch {
		case err == nil && rep.status/100 == 2 && !gjson.ValidBytes(rep.body):
			err = &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: "the step answered with a body that is not JSON"}
		case err == nil && rep.status/100 != 2 && s.hard:
			return rep, nil
		case err == nil && !gjson.ValidBytes(rep.body):
			err = &Error{Status: rep.status, Node: n.name, Step: s.name, Message: "the step failed with status " + statusText(rep.status) + " and a body that is not JSON"}
		}
		if err != nil {
			if s.hard {
				return nil, err
			}
			rep = asError(err).reply()
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, s.name)
		out = append(out, ':')
		out = append(out, bytes.TrimSpace(rep.body)...)
	}
	out = append(out, '}')
	return &reply{status: http.StatusOK, contentType: "application/json", body: out}, nil
}

// call runs one step: a call to its URL or a run through its node.
func (h *Handler) call(ctx context.Context, n *node, s *step, in *input, stream bool) (*reply, error) {
	start := time.Now()
	var rep *reply
	var err error
	if s.node != nil {
		rep, err = h.run(ctx, s.node, in, stream)
	} else {
		rep, err = s.upstream.call(ctx, in, h.propagate.write, stream)
		if err != nil {
			err = stepFailure(ctx, n, s, err)
		}
	}
	status := 0
	if rep != nil {
		status = rep.status
	}
	s.metrics.observe(start, status, err)
	return rep, err
}

// stepFailure turns a failed call into an Error naming the step: 504 when
// it ran out of time, 502 otherwise.
func stepFailure(ctx context.Context, n *node, s *step, err error) *Error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Status: http.StatusGatewayTimeout, Node: n.name, Step: s.name, Message: s.target() + " did not answer in time"}
	}
	return &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: s.target() + ": " + err.Error()}
}

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

// write writes Content-Type (the request's, or JSON) and the propagated
// headers of hdr.
func (f headerFilter) write(hdr http.Header, w *bufio.Writer) {
	ct := "application/json"
	if v := hdr["Content-Type"]; len(v) > 0 {
		ct = v[0]
	}
	writeHeader(w, "Content-Type", ct)
	for _, name := range f.exact {
		for _, v := range hdr[name] {
			writeHeader(w, name, v)
		}
	}
	if len(f.prefixes) == 0 {
		return
	}
	for name, values := range hdr {
		for _, p := range f.prefixes {
			if strings.HasPrefix(name, p) {
				for _, v := range values {
					writeHeader(w, name, v)
				}
				break
			}
		}
	}
}
