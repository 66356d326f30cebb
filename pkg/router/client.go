package router

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// stepClient calls steps through one tuned net/http Transport: kept-alive
// connections per step address, dial and response-header timeouts, TLS
// verified against the system's roots (the image's CA bundle), no proxy
// from the environment, no compression asked for, no redirects followed.
type stepClient struct {
	transport   *http.Transport
	timeout     time.Duration
	maxResponse int64
}

func newStepClient(o Options) *stepClient {
	dialer := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}
	return &stepClient{
		timeout: o.StepTimeout, maxResponse: o.MaxResponseBodyBytes,
		transport: &http.Transport{
			DialContext: dialer.DialContext,
			// The handshake is bounded by the step's deadline too; this
			// bound only keeps a stalled one from outliving a long step
			// timeout.
			TLSHandshakeTimeout:    min(o.StepTimeout, 10*time.Second),
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			ResponseHeaderTimeout:  o.ResponseHeaderTimeout,
			MaxIdleConnsPerHost:    o.MaxIdleConnsPerStep,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
			DisableCompression:     true,
			WriteBufferSize:        16 << 10,
			ReadBufferSize:         16 << 10,
		},
	}
}

// upstream is one step's URL, parsed once.
type upstream struct {
	// url is the step's URL as logs may show it: without its password,
	// query or fragment, which may hold a credential.
	url    string
	target *url.URL
	client *stepClient
}

// upstreams dedupes steps' URLs.
type upstreams struct {
	client *stepClient
	all    map[string]*upstream
}

func newUpstreams(o Options) *upstreams {
	return &upstreams{client: newStepClient(o), all: map[string]*upstream{}}
}

func (p *upstreams) get(raw string) (*upstream, error) {
	if u, ok := p.all[raw]; ok {
		return u, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", raw)
	}
	shown := *u
	shown.RawQuery, shown.ForceQuery, shown.Fragment, shown.RawFragment = "", false, "", ""
	up := &upstream{url: shown.Redacted(), target: u, client: p.client}
	p.all[raw] = up
	return up, nil
}

// input is what a step sends: bytes, or a body still arriving (read once).
type input struct {
	body   []byte
	stream io.Reader
	// length of stream, -1 when unknown (sent chunked).
	length int64
	header http.Header
}

// reply is a step's response: its status, content type and body, either
// read (body) or still streaming (stream).
type reply struct {
	status      int
	contentType string
	body        []byte
	stream      io.ReadCloser
	// length is the streaming body's length, -1 when unknown.
	length int64
	// res is the request's share of the buffer budget, which reading a
	// streaming body to its end takes from.
	res *reservation
}

// bytes reads a streaming body to the end.
func (r *reply) bytes() ([]byte, error) {
	if r.stream == nil {
		return r.body, nil
	}
	defer r.stream.Close()
	data, err := readCapped(r.stream, r.length, maxInt64, "the step's response", nil, r.res)
	r.stream, r.body = nil, data
	return data, err
}

const maxInt64 = 1<<63 - 1

// call sends in to the step and returns its response; the step's deadline
// bounds it all, from the dial and TLS handshake to the response body's
// last byte. A request is sent again only when none of it was written
// (net/http's rule for a kept-alive connection found closed); a request a
// client marked idempotent is never sent twice either.
func (u *upstream) call(ctx context.Context, in *input, header http.Header, stream bool) (*reply, error) {
	c := u.client
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	// The request is built as http.NewRequest builds it, from the URL
	// parsed once. GetBody lets net/http send a request again on a new
	// connection when none of it was written; a streaming body has none.
	req := &http.Request{Method: http.MethodPost, URL: u.target, Host: u.target.Host, Header: header,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if in.stream != nil {
		req.Body, req.ContentLength = io.NopCloser(in.stream), in.length
	} else if len(in.body) > 0 {
		data := in.body
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	if header["Idempotency-Key"] != nil || header["X-Idempotency-Key"] != nil {
		req.GetBody = nil // net/http would replay it after a failed read
	}
	resp, err := c.transport.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.ContentLength > c.maxResponse {
		_ = resp.Body.Close()
		cancel()
		return nil, &errTooLarge{what: "the step's response", limit: c.maxResponse}
	}
	rep := &reply{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), length: resp.ContentLength, res: reservationFrom(ctx)}
	rb := &responseBody{r: io.LimitReader(resp.Body, c.maxResponse+1), body: resp.Body, cancel: cancel, limit: c.maxResponse}
	if stream {
		rep.stream = rb
		return rep, nil
	}
	defer rb.Close()
	rep.body, err = readCapped(rb, resp.ContentLength, c.maxResponse, "the step's response", nil, rep.res)
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// responseBody is a step's response body: capped, and ending the step's
// deadline when closed.
type responseBody struct {
	r      io.Reader
	body   io.ReadCloser
	cancel context.CancelFunc
	limit  int64
	read   int64
}

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		return n, &errTooLarge{what: "the step's response", limit: b.limit}
	}
	return n, err
}

func (b *responseBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// isTLSError reports whether err is a failed TLS handshake or certificate
// check.
func isTLSError(err error) bool {
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}
