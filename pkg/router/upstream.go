package router

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// upstream is one step's HTTP/1.1 endpoint and its pool of kept-alive
// connections. A call runs on the caller's goroutine from writing the
// request to reading the response: net/http's Transport hands each request
// to two goroutines per connection through channels, which on a small
// machine costs as much CPU as the model server's own HTTP handling, and a
// router in front of every request must cost less than that.
type upstream struct {
	url     string
	addr    string
	tls     *tls.Config
	timeout time.Duration
	// head is the request line and fixed headers, written first.
	head []byte
	idle chan *upstreamConn
	dial net.Dialer
}

type upstreamConn struct {
	net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	// deadline is the connection's deadline as last set.
	deadline time.Time
	// idleSince is when the connection was last put back in the pool.
	idleSince time.Time
	body      body2conn
}

// upstreams dedupes endpoints: steps of the same URL share one pool.
type upstreams struct {
	o   Options
	all map[string]*upstream
}

func newUpstreams(o Options) *upstreams {
	if o.MaxIdleConnsPerStep <= 0 {
		o.MaxIdleConnsPerStep = 256
	}
	return &upstreams{o: o, all: map[string]*upstream{}}
}

func (p *upstreams) get(raw string) (*upstream, error) {
	if u, ok := p.all[raw]; ok {
		return u, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", raw, err)
	}
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	up := &upstream{url: raw, addr: addr, timeout: p.o.StepTimeout, idle: make(chan *upstreamConn, p.o.MaxIdleConnsPerStep),
		dial: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}}
	if u.Scheme == "https" {
		up.tls = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	}
	up.head = []byte("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: serval-router\r\n")
	p.all[raw] = up
	return up, nil
}

// reply is a step's response: its status, content type and body, either
// read (body) or still streaming from the connection (stream).
type reply struct {
	status      int
	contentType string
	body        []byte
	stream      io.ReadCloser
	// length is the streaming body's length, -1 when unknown (chunked).
	length int64
}

// bytes reads a streaming body to the end.
func (r *reply) bytes() ([]byte, error) {
	if r.stream == nil {
		return r.body, nil
	}
	defer r.stream.Close()
	data, err := io.ReadAll(r.stream)
	r.stream, r.body = nil, data
	return data, err
}

// discard drops the body, keeping the connection when it can.
func (r *reply) discard() {
	if r.stream != nil {
		_ = r.stream.Close()
		r.stream = nil
	}
}

// input is what a step sends: bytes, or a body still arriving (read once).
type input struct {
	body   []byte
	stream io.Reader
	// length of stream, -1 when unknown (sent chunked).
	length int64
	header http.Header
}

var errStaleConn = errors.New("kept-alive connection closed by the server")

// call sends in to the upstream and returns its response. A body of known
// bytes is sent once more on a new connection if a kept-alive one turns out
// closed before it answered.
func (u *upstream) call(ctx context.Context, in *input, propagate func(http.Header, *bufio.Writer), stream bool) (*reply, error) {
	deadline := time.Now().Add(u.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for attempt := 0; ; attempt++ {
		c, reused, err := u.conn(ctx, deadline)
		if err != nil {
			return nil, err
		}
		r, err := u.roundTrip(ctx, c, in, propagate, stream)
		if err == nil {
			return r, nil
		}
		_ = c.Close()
		if errors.Is(err, errStaleConn) && reused && in.stream == nil && attempt == 0 {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
}

// conn takes an idle connection, or dials a new one. A connection idle for
// longer than staleAfter is first checked for a close by the server (model
// servers commonly close idle connections after 5 s): a body that streams
// cannot be sent again on a new connection.
func (u *upstream) conn(ctx context.Context, deadline time.Time) (*upstreamConn, bool, error) {
	for {
		select {
		case c := <-u.idle:
			if time.Since(c.idleSince) > staleAfter && !c.alive() {
				_ = c.Close()
				continue
			}
			if err := c.setDeadline(deadline); err != nil {
				_ = c.Close()
				continue
			}
			return c, true, nil
		default:
		}
		dctx, cancel := context.WithDeadline(ctx, deadline)
		nc, err := u.dial.DialContext(dctx, "tcp", u.addr)
		cancel()
		if err != nil {
			return nil, false, err
		}
		if u.tls != nil {
			tc := tls.Client(nc, u.tls)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = nc.Close()
				return nil, false, err
			}
			nc = tc
		}
		c := &upstreamConn{Conn: nc, br: bufio.NewReaderSize(nc, 16<<10), bw: bufio.NewWriterSize(nc, 16<<10)}
		if err := c.setDeadline(deadline); err != nil {
			_ = nc.Close()
			return nil, false, err
		}
		return c, false, nil
	}
}

// staleAfter is the idle time after which a kept-alive connection is
// checked before use.
const staleAfter = time.Second

// deadlineSlack is how much earlier than asked a call's deadline may be
// kept: moving a connection's deadline costs a timer update, and most calls
// would move it by microseconds.
const deadlineSlack = 500 * time.Millisecond

// setDeadline makes the connection's deadline d, or keeps the one it has if
// that is no later than d and at most deadlineSlack earlier.
func (c *upstreamConn) setDeadline(d time.Time) error {
	if !c.deadline.After(d) && d.Sub(c.deadline) <= deadlineSlack {
		return nil
	}
	c.deadline = d
	return c.SetDeadline(d)
}

// alive reports whether a kept-alive connection is still open: the server
// has neither closed it nor sent anything unasked. It peeks at the socket
// without blocking.
func (c *upstreamConn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	buf := make([]byte, 1)
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = n < 0 || err == syscall.EAGAIN
		if n == 0 && err == nil {
			alive = false // closed by the peer
		}
		return true
	})
	return alive
}

func (u *upstream) release(c *upstreamConn) {
	c.idleSince = time.Now()
	select {
	case u.idle <- c:
	default:
		_ = c.Close()
	}
}

func (u *upstream) roundTrip(ctx context.Context, c *upstreamConn, in *input, propagate func(http.Header, *bufio.Writer), stream bool) (*reply, error) {
	if ctx.Done() != nil {
		// A cancelled call leaves the deadline in the past; the connection
		// is closed then, never reused.
		stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	w := c.bw
	_, _ = w.Write(u.head)
	propagate(in.header, w)
	chunked := false
	switch {
	case in.stream == nil:
		writeHeader(w, "Content-Length", strconv.Itoa(len(in.body)))
	case in.length >= 0:
		writeHeader(w, "Content-Length", strconv.FormatInt(in.length, 10))
	default:
		chunked = true
		writeHeader(w, "Transfer-Encoding", "chunked")
	}
	_, _ = w.WriteString("\r\n")
	var err error
	switch {
	case in.stream == nil:
		_, err = w.Write(in.body)
	case chunked:
		cw := httputil.NewChunkedWriter(w)
		if _, err = io.Copy(cw, in.stream); err == nil {
			err = cw.Close()
		}
		if err == nil {
			_, err = w.WriteString("\r\n")
		}
	default:
		_, err = io.CopyN(w, in.stream, in.length)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return nil, err
	}
	return u.readResponse(c, stream)
}

func writeHeader(w *bufio.Writer, name, value string) {
	_, _ = w.WriteString(name)
	_, _ = w.WriteString(": ")
	_, _ = w.WriteString(value)
	_, _ = w.WriteString("\r\n")
}

// readResponse reads the status line and headers, then the body, or leaves
// it streaming when asked.
func (u *upstream) readResponse(c *upstreamConn, stream bool) (*reply, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errStaleConn
		}
		return nil, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return nil, fmt.Errorf("malformed response status line %q", bytes.TrimSpace(line))
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return nil, fmt.Errorf("malformed response status line %q", bytes.TrimSpace(line))
	}
	r := &reply{status: status}
	length, chunked, closeAfter := int64(-1), false, line[7] == '0'
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("read response headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			continue
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return nil, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Content-Type")):
			if string(value) == jsonType {
				r.contentType = jsonType
			} else {
				r.contentType = string(value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			closeAfter = closeAfter || bytes.EqualFold(value, []byte("close"))
		}
	}
	if status == http.StatusNoContent || status == http.StatusNotModified {
		length, chunked = 0, false // no body, whatever the headers say
	}
	var body io.Reader
	switch {
	case chunked:
		body = httputil.NewChunkedReader(c.br)
	case length >= 0:
		if !stream && length <= int64(c.br.Size()) {
			// The common case: a small body, read straight from the buffer.
			r.body = make([]byte, length)
			if _, err := io.ReadFull(c.br, r.body); err != nil {
				return nil, fmt.Errorf("read response body: %w", err)
			}
			u.done(c, closeAfter)
			return r, nil
		}
		body = io.LimitReader(c.br, length)
	default:
		// No length: the body ends when the server closes the connection.
		body, closeAfter = c.br, true
	}
	// One response at a time uses a connection: its body reader is reused.
	b := &c.body
	*b = body2conn{r: body, u: u, c: c, closeAfter: closeAfter, chunked: chunked}
	if stream {
		r.stream, r.length = b, length
		if chunked {
			r.length = -1
		}
		return r, nil
	}
	data, err := io.ReadAll(b)
	_ = b.Close()
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	r.body = data
	return r, nil
}

// done returns a connection whose response was read in full to the pool.
func (u *upstream) done(c *upstreamConn, closeAfter bool) {
	if closeAfter {
		_ = c.Close()
		return
	}
	u.release(c)
}

// body2conn is a response body that gives its connection back once read to
// the end, and closes it otherwise.
type body2conn struct {
	r          io.Reader
	u          *upstream
	c          *upstreamConn
	closeAfter bool
	chunked    bool
	eof        bool
	closed     bool
}

func (b *body2conn) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		if l, ok := b.r.(*io.LimitedReader); ok && l.N > 0 {
			// The connection ended before the announced length.
			return n, io.ErrUnexpectedEOF
		}
		b.eof = true
	}
	return n, err
}

func (b *body2conn) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.eof && b.chunked {
		// The chunked reader stops at the last chunk; the trailer's empty
		// line follows.
		if line, err := b.c.br.ReadSlice('\n'); err != nil || len(bytes.TrimSpace(line)) != 0 {
			return b.c.Close()
		}
	}
	if !b.eof {
		return b.c.Close()
	}
	b.u.done(b.c, b.closeAfter)
	return nil
}
