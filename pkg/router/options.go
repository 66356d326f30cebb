package router

import (
	"flag"
	"log/slog"
	"time"
)

// Options are the router's settings besides the graph: how it calls steps
// and what one request may cost. The zero value of a field means its
// default (the Default* constants).
type Options struct {
	// StepTimeout bounds one call to one step, from dialling to the last
	// byte of its response (routerTimeouts.serviceClient).
	StepTimeout time.Duration
	// DialTimeout bounds opening a connection to a step; the TLS handshake
	// of an https step is bounded by the step's deadline as well.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a step's response headers
	// after its request was sent; 0 leaves it to StepTimeout.
	ResponseHeaderTimeout time.Duration
	// MaxIdleConnsPerStep is the number of idle connections kept to each
	// step's address.
	MaxIdleConnsPerStep int
	// MaxRequestBodyBytes caps a request's body; a larger one is answered
	// 413. It is also the most a node that reads the body first (Switch,
	// Ensemble, a Sequence of several steps) holds in memory per request.
	MaxRequestBodyBytes int64
	// MaxResponseBodyBytes caps a step's response body; a larger one fails
	// the step (502).
	MaxResponseBodyBytes int64
	// MaxBufferedBytes bounds the request and response bodies the whole
	// router holds in memory at once; a request that would pass it is
	// answered 503 with Retry-After.
	MaxBufferedBytes int64
	// MaxDepth is the longest chain of nodes a request may pass; MaxStepCalls
	// the most calls to services one request may make. Admission refuses
	// graphs over the same limits; the router enforces them as it runs.
	MaxDepth, MaxStepCalls int
	// PropagateHeaders are the request headers passed on to every step:
	// exact names, or prefixes ending in "*". Content-Type always is.
	PropagateHeaders []string
	// Log receives a line per failed step call, with the step's URL that
	// the client's error leaves out; nil discards.
	Log *slog.Logger
}

// The defaults of Options and ServerLimits. They are also serval-config's
// (docs/configuration.md, router.*).
const (
	DefaultStepTimeout          = 60 * time.Second
	DefaultDialTimeout          = 10 * time.Second
	DefaultMaxIdleConnsPerStep  = 256
	DefaultMaxRequestBodyBytes  = 64 << 20
	DefaultMaxResponseBodyBytes = 64 << 20
	DefaultMaxBufferedBytes     = 256 << 20
	DefaultMaxConnections       = 1024
	DefaultMaxConcurrentStreams = 64
	DefaultMaxDepth             = 10
	DefaultMaxStepCalls         = 64
	DefaultMaxHeaderBytes       = 1 << 20
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultReadTimeout          = 60 * time.Second
	DefaultWriteTimeout         = 60 * time.Second
	DefaultIdleTimeout          = 180 * time.Second
)

// withDefaults fills the fields left zero.
func (o Options) withDefaults() Options {
	setDefault(&o.StepTimeout, DefaultStepTimeout)
	setDefault(&o.DialTimeout, DefaultDialTimeout)
	setDefault(&o.MaxIdleConnsPerStep, DefaultMaxIdleConnsPerStep)
	setDefault(&o.MaxRequestBodyBytes, DefaultMaxRequestBodyBytes)
	setDefault(&o.MaxResponseBodyBytes, DefaultMaxResponseBodyBytes)
	setDefault(&o.MaxBufferedBytes, DefaultMaxBufferedBytes)
	setDefault(&o.MaxDepth, DefaultMaxDepth)
	setDefault(&o.MaxStepCalls, DefaultMaxStepCalls)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// ServerLimits bound the router's client connections.
type ServerLimits struct {
	// MaxHeaderBytes caps a request's line and headers; more is answered
	// 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading a request's line and headers, so
	// that a client trickling them cannot hold a connection.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included;
	// WriteTimeout writing its response, from the end of its headers;
	// IdleTimeout the wait for the next request on a kept-alive
	// connection.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections bounds the client connections open at once; more
	// wait in the listen queue until one closes.
	MaxConnections int
	// MaxConcurrentStreams bounds the requests in flight on one HTTP/2
	// connection.
	MaxConcurrentStreams int
}

func (l ServerLimits) withDefaults() ServerLimits {
	setDefault(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDefault(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setDefault(&l.ReadTimeout, DefaultReadTimeout)
	setDefault(&l.WriteTimeout, DefaultWriteTimeout)
	setDefault(&l.IdleTimeout, DefaultIdleTimeout)
	setDefault(&l.MaxConnections, DefaultMaxConnections)
	setDefault(&l.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
	return l
}

// RegisterFlags binds every limit of c to a flag of fs, with its default:
// the flags of cmd/router, which the graph controller sets from
// serval-config.
func (c *ServerConfig) RegisterFlags(fs *flag.FlagSet) {
	o, l := &c.Options, &c.Limits
	fs.DurationVar(&o.StepTimeout, "step-timeout", DefaultStepTimeout, "Bound of one call to one step, from dialling to the last byte of its response.")
	fs.DurationVar(&o.DialTimeout, "step-dial-timeout", DefaultDialTimeout, "Bound of opening a connection to a step.")
	fs.DurationVar(&o.ResponseHeaderTimeout, "step-response-header-timeout", 0, "Bound of the wait for a step's response headers once its request is sent; 0 leaves it to --step-timeout.")
	fs.IntVar(&o.MaxIdleConnsPerStep, "max-idle-conns-per-step", DefaultMaxIdleConnsPerStep, "Idle connections kept to each step's address.")
	fs.Int64Var(&o.MaxRequestBodyBytes, "max-request-body-bytes", DefaultMaxRequestBodyBytes, "Cap of a request's body, answered 413 above it; also what a node that reads the body first holds per request.")
	fs.Int64Var(&o.MaxResponseBodyBytes, "max-response-body-bytes", DefaultMaxResponseBodyBytes, "Cap of a step's response body; a larger one fails the step (502).")
	fs.Int64Var(&o.MaxBufferedBytes, "max-buffered-bytes", DefaultMaxBufferedBytes, "Bound of the request and response bodies the whole router holds in memory at once; a request past it is answered 503 with Retry-After.")
	fs.IntVar(&l.MaxConnections, "max-connections", DefaultMaxConnections, "Bound of the client connections open at once; more wait in the listen queue.")
	fs.IntVar(&l.MaxConcurrentStreams, "max-concurrent-streams", DefaultMaxConcurrentStreams, "Bound of the requests in flight on one HTTP/2 connection.")
	fs.IntVar(&o.MaxDepth, "max-depth", DefaultMaxDepth, "The longest chain of nodes one request may pass.")
	fs.IntVar(&o.MaxStepCalls, "max-step-calls", DefaultMaxStepCalls, "The most calls to services one request may make.")
	fs.IntVar(&l.MaxHeaderBytes, "max-header-bytes", DefaultMaxHeaderBytes, "Cap of a request's line and headers, answered 431 above it.")
	fs.DurationVar(&l.ReadHeaderTimeout, "server-read-header-timeout", DefaultReadHeaderTimeout, "Bound of reading a request's line and headers.")
	fs.DurationVar(&l.ReadTimeout, "server-read-timeout", DefaultReadTimeout, "Bound of reading a whole request, body included.")
	fs.DurationVar(&l.WriteTimeout, "server-write-timeout", DefaultWriteTimeout, "Bound of answering a request, from the end of its headers.")
	fs.DurationVar(&l.IdleTimeout, "server-idle-timeout", DefaultIdleTimeout, "Bound of the wait for the next request on a kept-alive connection.")
}
