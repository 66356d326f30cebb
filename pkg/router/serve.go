package router

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// Handler serves a graph over HTTP: every request but the health checks
// (GET /readyz and GET /livez) enters the root node.
type Handler struct {
	graph     *Graph
	metrics   *Metrics
	propagate headerFilter
	o         Options
	draining  atomic.Bool
	// buffers is the budget of every body the router holds in memory.
	buffers *bufferBudget
}

// NewHandler returns the handler of a compiled graph; m may be nil.
func NewHandler(g *Graph, o Options, m *Metrics) *Handler {
	o = o.withDefaults()
	return &Handler{graph: g, metrics: m, propagate: newHeaderFilter(o.PropagateHeaders), o: o, buffers: &bufferBudget{limit: o.MaxBufferedBytes}}
}

// Drain makes readiness fail, so that the router is taken out of its
// Service before it shuts down.
func (h *Handler) Drain() { h.draining.Store(true) }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if closesAfter(r) {
		w.Header()["Connection"] = connectionClose
	}
	if r.Method == http.MethodGet && h.health(w, r.URL.Path) {
		return
	}
	h.serve(w, r, time.Now())
}

// health answers the health checks, GET /readyz and GET /livez; it reports
// whether path was one.
func (h *Handler) health(w http.ResponseWriter, path string) bool {
	switch {
	case path == "/readyz" && h.draining.Load():
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	case path == "/readyz" || path == "/livez":
		_, _ = io.WriteString(w, "ok")
	default:
		return false
	}
	return true
}

// serve routes one request, which arrived at start, through the graph,
// and writes and counts the answer.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, start time.Time) {
	ctx := r.Context()
	if h.graph.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.graph.timeout)
		defer cancel()
	}
	res := &reservation{budget: h.buffers}
	defer res.release()
	ctx = withReservation(ctx, res)
	body := &requestBody{r: http.MaxBytesReader(w, r.Body, h.o.MaxRequestBodyBytes)}
	in := &input{header: r.Header}
	// A small body of known length is read first even when the root could
	// stream it: a step's request then leaves in one write, headers and
	// body together, where a stream costs a write for each.
	if h.graph.root.streams && (r.ContentLength < 0 || r.ContentLength > smallBodyBytes) {
		if r.ContentLength > h.o.MaxRequestBodyBytes {
			h.fail(w, start, &Error{Status: http.StatusRequestEntityTooLarge, Message: body.tooLarge(h.o.MaxRequestBodyBytes).Error()})
			return
		}
		in.stream, in.length = body, r.ContentLength
	} else {
		// Not into a pooled buffer: net/http's Transport may still read a
		// step's request body after the step answered, so a buffer given
		// back when this request ends could be sent as part of another's.
		data, err := readCapped(body, r.ContentLength, h.o.MaxRequestBodyBytes, "the request body", nil, res)
		if err != nil {
			h.fail(w, start, body.failure(err, h.o.MaxRequestBodyBytes))
			return
		}
		in.body = data
	}
	rep, err := h.run(ctx, &trip{}, h.graph.root, in, true, 1)
	if body.err != nil {
		// The client's body failed while it streamed to a step: whatever
		// the graph made of that, the fault is the client's.
		if rep != nil && rep.stream != nil {
			_ = rep.stream.Close()
		}
		h.fail(w, start, body.failure(body.err, h.o.MaxRequestBodyBytes))
		return
	}
	if err != nil {
		h.fail(w, start, asError(err))
		return
	}
	// Counted as its headers go: a streamed body that fails after them
	// cuts the connection (see writeReply), and is counted all the same.
	h.metrics.request(start, rep.status)
	writeReply(w, rep)
}

// closesAfter reports whether the connection must close after r's
// response (RFC 9112 6.1): a chunked request may also have carried a
// Content-Length (net/http drops it, so which cannot be told here), and an
// HTTP/1.0 request with a Transfer-Encoding is framed by its
// Content-Length (net/http drops the encoding, so every HTTP/1.0 request
// closes). Either way no byte after the request is read as another one.
func closesAfter(r *http.Request) bool {
	if r.ProtoMajor != 1 {
		return false
	}
	return r.ProtoMinor == 0 || slices.Contains(r.TransferEncoding, "chunked")
}

var connectionClose = []string{"close"}

// fail answers e, and counts it.
func (h *Handler) fail(w http.ResponseWriter, start time.Time, e *Error) {
	body := e.JSON()
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	if e.RetryAfter > 0 {
		hdr["Retry-After"] = []string{strconv.Itoa(e.RetryAfter)}
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
	h.metrics.request(start, e.Status)
}

// writeReply writes a step's reply as the response, with its length when
// it is known, so that net/http sends it without chunks.
func writeReply(w http.ResponseWriter, rep *reply) {
	hdr := w.Header()
	switch rep.contentType {
	case "":
	case jsonType:
		hdr["Content-Type"] = jsonContentType
	default:
		hdr["Content-Type"] = []string{rep.contentType}
	}
	if rep.stream == nil {
		hdr["Content-Length"] = []string{strconv.Itoa(len(rep.body))}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.body)
		return
	}
	defer rep.stream.Close()
	if rep.length >= 0 {
		hdr["Content-Length"] = []string{strconv.FormatInt(rep.length, 10)}
	}
	w.WriteHeader(rep.status)
	p := smallBuffers.Get().(*[]byte)
	defer smallBuffers.Put(p)
	if _, err := io.CopyBuffer(writerOnly{w}, rep.stream, (*p)[:cap(*p)]); err != nil {
		// The status is sent: the only way left to tell the client that
		// the body is incomplete is to cut the connection, not to end the
		// body as if it were whole. net/http's documented way to do that.
		panic(http.ErrAbortHandler)
	}
}

// writerOnly hides the ResponseWriter's ReadFrom, so that CopyBuffer uses
// the pooled buffer.
type writerOnly struct{ io.Writer }

// requestBody is the client's body, capped; it keeps the first error of
// reading it, so that a step call that failed because of the client's body
// is answered as the client's failure.
type requestBody struct {
	r   io.Reader
	err error
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *requestBody) tooLarge(limit int64) error {
	return &errTooLarge{what: "the request body", limit: limit}
}

// failure is the client's error for a body that could not be read: 413
// over the cap, 408 when it was not sent in time, 400 otherwise.
func (b *requestBody) failure(err error, limit int64) *Error {
	var maxErr *http.MaxBytesError
	var tooLarge *errTooLarge
	var busy *errBusy
	var ne net.Error
	switch {
	case errors.As(err, &busy):
		return busyError(busy)
	case errors.As(err, &maxErr) || errors.As(err, &tooLarge):
		return &Error{Status: http.StatusRequestEntityTooLarge, Message: b.tooLarge(limit).Error()}
	case errors.As(err, &ne) && ne.Timeout():
		return &Error{Status: http.StatusRequestTimeout, Message: "the request body did not arrive in time"}
	}
	return &Error{Status: http.StatusBadRequest, Message: "the request body could not be read"}
}

// jsonType is the content type of nearly every response; jsonContentType
// is it as a header value, shared so that setting it allocates nothing.
const jsonType = "application/json"

var jsonContentType = []string{jsonType}
