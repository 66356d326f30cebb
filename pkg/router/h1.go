package router

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves a Handler: HTTP/1.1 on a loop of its own, HTTP/2 without
// TLS (h2c, with prior knowledge, as gRPC clients speak it) through
// net/http.
//
// The HTTP/1.1 loop is why the router costs less CPU per request than the
// model server behind it: net/http's server reads ahead on every kept-alive
// connection in a second goroutine (to notice a client that goes away) and
// parses every header into a map, which on a small machine doubles the
// router's work per request. The loop reads a request, routes it, writes
// the response, on one goroutine, keeping only the headers it passes on.
// The cost: a client that goes away mid-request is noticed when the
// response is written, not before; the steps still run (bounded by their
// timeout), as with KServe's router.
type Server struct {
	handler *Handler
	// deadline bounds a connection from the start of each request (or of
	// the wait for one): the longer of the read plus write timeouts and
	// the idle timeout.
	deadline time.Duration
	h2       *http.Server
	h2conns  *connListener

	mu       sync.Mutex
	listener net.Listener
	conns    map[*h1conn]struct{}
	closing  atomic.Bool
	active   sync.WaitGroup
}

// NewServer returns a server of h. read, write and idle bound a request's
// reading, its response's writing and a kept-alive connection's wait for
// the next request; 0 means no bound. On HTTP/1.1 connections they are
// applied together, with a second's precision: moving a connection's
// deadline costs a timer update, which at every request would cost more
// than the rest of the loop.
func NewServer(h *Handler, read, write, idle time.Duration) *Server {
	s := &Server{handler: h, conns: map[*h1conn]struct{}{}, h2conns: newConnListener()}
	if read > 0 && write > 0 && idle > 0 {
		s.deadline = max(read+write, idle)
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	s.h2 = &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: read, WriteTimeout: write, IdleTimeout: idle}
	return s
}

// Serve accepts connections on ln until Shutdown or Close; it then returns
// http.ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.listener = ln
	s.mu.Unlock()
	go func() { _ = s.h2.Serve(s.h2conns) }()
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		hc := &h1conn{Conn: c, s: s}
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			_ = c.Close()
			return http.ErrServerClosed
		}
		s.conns[hc] = struct{}{}
		s.active.Add(1)
		s.mu.Unlock()
		go hc.serve()
	}
}

// Shutdown stops accepting, closes idle connections, and waits until the
// requests in flight are answered or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.mu.Lock()
	if s.listener != nil {
		_ = s.listener.Close()
	}
	for c := range s.conns {
		c.closeIfIdle()
	}
	s.mu.Unlock()
	h2err := s.h2.Shutdown(ctx)
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return h2err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
			// A connection that was reading a request when Shutdown began
			// is idle again once it has answered.
			s.mu.Lock()
			for c := range s.conns {
				c.closeIfIdle()
			}
			s.mu.Unlock()
		}
	}
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.closing.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		_ = s.listener.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	return s.h2.Close()
}

func (s *Server) forget(c *h1conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Done()
}

// The states of a connection.
const (
	connIdle int32 = iota
	connActive
	connClosed
)

// h1conn is one HTTP/1.1 connection.
type h1conn struct {
	net.Conn
	s        *Server
	state    atomic.Int32
	br       *bufio.Reader
	bw       *bufio.Writer
	deadline time.Time
	// header holds the request headers passed on to steps, reused.
	header http.Header
	// closeAfter: the response ends the connection.
	closeAfter bool
	head       bool
}

func (c *h1conn) closeIfIdle() {
	if c.state.CompareAndSwap(connIdle, connClosed) {
		_ = c.Close()
	}
}

var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 16<<10) }}
)

// h2Preface starts every HTTP/2 connection with prior knowledge.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func (c *h1conn) serve() {
	defer c.s.forget(c)
	c.br = readers.Get().(*bufio.Reader)
	c.br.Reset(c.Conn)
	c.bw = writers.Get().(*bufio.Writer)
	c.bw.Reset(c.Conn)
	defer func() {
		c.br.Reset(nil)
		readers.Put(c.br)
		c.bw.Reset(nil)
		writers.Put(c.bw)
	}()
	c.header = http.Header{}
	c.refreshDeadline()
	if c.isHTTP2() {
		// net/http serves the connection, the bytes read so far first, with
		// its own deadlines.
		buffered, _ := c.br.Peek(c.br.Buffered())
		_ = c.SetDeadline(time.Time{})
		c.s.h2conns.hand(&bufferedConn{Conn: c.Conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(buffered)), c.Conn)})
		return
	}
	for {
		if c.state.Load() != connIdle {
			break
		}
		// Wait for the next request while idle.
		if _, err := c.br.Peek(1); err != nil {
			break
		}
		if !c.state.CompareAndSwap(connIdle, connActive) {
			break // closed by Shutdown meanwhile
		}
		c.refreshDeadline()
		if !c.serveOne() || c.s.closing.Load() {
			break
		}
		c.state.Store(connIdle)
	}
	c.state.Store(connClosed)
	_ = c.Close()
}

// isHTTP2 reports whether the connection starts with HTTP/2's preface. It
// reads no more than a request of HTTP/1 has: "PRI " is no HTTP/1 method.
func (c *h1conn) isHTTP2() bool {
	if p, err := c.br.Peek(4); err != nil || string(p) != h2Preface[:4] {
		return false
	}
	p, err := c.br.Peek(len(h2Preface))
	return err == nil && string(p) == h2Preface
}

// refreshDeadline moves the connection's deadline to the server's bound
// from now, unless it would move by less than a second.
func (c *h1conn) refreshDeadline() {
	if c.s.deadline == 0 {
		return
	}
	d := time.Now().Add(c.s.deadline)
	if d.Sub(c.deadline) < time.Second {
		return
	}
	c.deadline = d
	_ = c.SetDeadline(d)
}

// errBadRequest is a request the loop cannot read.
type errBadRequest struct {
	status int
	msg    string
}

func (e errBadRequest) Error() string { return e.msg }

// serveOne reads one request and answers it. It reports whether the
// connection can serve another.
func (c *h1conn) serveOne() bool {
	req, err := c.readRequest()
	if err != nil {
		var bad errBadRequest
		if errors.As(err, &bad) {
			c.closeAfter = true
			body := []byte(bad.msg + "\n")
			c.respond(bad.status, "text/plain; charset=utf-8", body, nil, int64(len(body)))
			_ = c.bw.Flush()
		}
		return false
	}
	if req.expectContinue {
		_, _ = c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if c.bw.Flush() != nil {
			return false
		}
	}
	h := c.s.handler
	if !(req.method == http.MethodGet && h.health(req.path, c)) {
		h.serve(context.Background(), c.header, req.body, req.length, c)
	}
	if c.bw.Flush() != nil || c.closeAfter {
		return false
	}
	// What the handler left of the body is read and dropped, up to a bound,
	// so that the next request starts where it should.
	if n, err := io.Copy(io.Discard, io.LimitReader(req.body, 256<<10)); err != nil || n == 256<<10 {
		return false
	}
	if req.chunked && !req.trailerRead(c.br) {
		return false
	}
	return true
}

// h1request is what the loop keeps of a request.
type h1request struct {
	method, path   string
	length         int64
	chunked        bool
	expectContinue bool
	body           io.Reader
}

// trailerRead consumes the end of a chunked body (no trailers are kept).
func (r *h1request) trailerRead(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return true
		}
	}
}

// The methods the loop keeps as constants, so that reading them allocates
// nothing.
var methods = map[string]string{"POST": "POST", "GET": "GET", "PUT": "PUT", "HEAD": "HEAD", "OPTIONS": "OPTIONS", "DELETE": "DELETE", "PATCH": "PATCH"}

func (c *h1conn) readRequest() (*h1request, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errBadRequest{http.StatusRequestURITooLong, "the request line is too long"}
		}
		return nil, err
	}
	line = bytes.TrimRight(line, "\r\n")
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 {
		return nil, errBadRequest{http.StatusBadRequest, "malformed request line"}
	}
	proto := line[sp2+1:]
	if !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(proto) != 8 {
		return nil, errBadRequest{http.StatusHTTPVersionNotSupported, "unsupported protocol " + string(proto)}
	}
	req := &h1request{length: 0}
	req.method = methods[string(line[:sp1])]
	if req.method == "" {
		req.method = string(line[:sp1])
	}
	target := line[sp1+1 : sp2]
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		target = target[:q]
	}
	if string(target) == "/readyz" || string(target) == "/livez" {
		req.path = string(target)
	}
	c.closeAfter = proto[7] == '0' // HTTP/1.0 closes unless asked otherwise
	c.head = req.method == http.MethodHead
	clear(c.header)
	f := c.s.handler.propagate
	length, haveLength := int64(0), false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, errBadRequest{http.StatusRequestHeaderFieldsTooLarge, "a request header is too long"}
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return nil, errBadRequest{http.StatusBadRequest, "malformed request header"}
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return nil, errBadRequest{http.StatusBadRequest, "malformed Content-Length"}
			}
			haveLength = true
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(value, []byte("chunked")) {
				return nil, errBadRequest{http.StatusNotImplemented, "unsupported Transfer-Encoding " + string(value)}
			}
			req.chunked = true
		case bytes.EqualFold(name, []byte("Connection")):
			switch {
			case bytes.EqualFold(value, []byte("close")):
				c.closeAfter = true
			case bytes.EqualFold(value, []byte("keep-alive")):
				c.closeAfter = false
			}
		case bytes.EqualFold(name, []byte("Expect")):
			req.expectContinue = bytes.EqualFold(value, []byte("100-continue"))
		case bytes.EqualFold(name, []byte("Content-Type")):
			if string(value) == jsonType {
				c.header["Content-Type"] = jsonContentType
			} else {
				c.header["Content-Type"] = []string{string(value)}
			}
		default:
			if key, ok := f.keeps(name); ok {
				c.header[key] = append(c.header[key], string(value))
			}
		}
	}
	switch {
	case req.chunked && haveLength:
		return nil, errBadRequest{http.StatusBadRequest, "both Content-Length and Transfer-Encoding"}
	case req.chunked:
		req.length, req.body = -1, httputil.NewChunkedReader(c.br)
	default:
		req.length, req.body = length, io.LimitReader(c.br, length)
	}
	return req, nil
}

// keeps reports whether a request header is passed on to steps, and its
// canonical name.
func (f headerFilter) keeps(name []byte) (string, bool) {
	if len(f.exact) == 0 && len(f.prefixes) == 0 {
		return "", false
	}
	key := http.CanonicalHeaderKey(string(name))
	for _, e := range f.exact {
		if e == key {
			return key, true
		}
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(key, p) {
			return key, true
		}
	}
	return "", false
}

// respond implements responder on the connection's buffered writer.
func (c *h1conn) respond(status int, contentType string, body []byte, stream io.Reader, length int64) {
	if stream == nil {
		length = int64(len(body))
	}
	w := c.bw
	_, _ = w.WriteString(statusLine(status))
	if contentType != "" {
		writeHeader(w, "Content-Type", contentType)
	}
	chunked := stream != nil && length < 0
	switch {
	case chunked && !c.closeAfter:
		writeHeader(w, "Transfer-Encoding", "chunked")
	case chunked:
	default:
		writeHeader(w, "Content-Length", strconv.FormatInt(length, 10))
	}
	if c.closeAfter || c.s.closing.Load() {
		c.closeAfter = true
		_, _ = w.WriteString("Connection: close\r\n")
	}
	_, _ = w.WriteString("\r\n")
	if c.head {
		return
	}
	switch {
	case stream == nil:
		_, _ = w.Write(body)
	case chunked && !c.closeAfter:
		cw := httputil.NewChunkedWriter(w)
		if !copyStream(cw, stream) {
			// Cut short: no last chunk, and the connection ends, so that
			// the client sees the response fail rather than end.
			c.closeAfter = true
			return
		}
		_ = cw.Close()
		_, _ = w.WriteString("\r\n")
	default:
		if !copyStream(w, stream) {
			// Fewer bytes than announced: the connection cannot go on.
			c.closeAfter = true
		}
	}
}

var statusLines sync.Map // int -> string

func statusLine(status int) string {
	if v, ok := statusLines.Load(status); ok {
		return v.(string)
	}
	line := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n"
	statusLines.Store(status, line)
	return line
}

// bufferedConn is a connection whose first bytes were already read.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener hands connections to the HTTP/2 server.
type connListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) hand(c *bufferedConn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{} }
