package router

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// trip is one request's way through the graph: it counts the calls to
// services, which Options.MaxStepCalls bounds.
type trip struct{ calls atomic.Int32 }

// run routes in through node n, the depth-th node on the request's way.
// stream asks for the reply's body left streaming when it is the answer to
// the client.
func (h *Handler) run(ctx context.Context, t *trip, n *node, in *input, stream bool, depth int) (*reply, error) {
	if depth > h.o.MaxDepth {
		return nil, &Error{Status: http.StatusInternalServerError, Node: n.name,
			Message: "the request would pass more than " + strconv.Itoa(h.o.MaxDepth) + " nodes, the router's limit (--max-depth)"}
	}
	switch n.typ {
	case v1alpha1.Sequence:
		return h.sequence(ctx, t, n, in, stream, depth)
	case v1alpha1.Splitter:
		return h.call(ctx, t, n, n.steps[pick(n.cumulative)], in, stream, depth)
	case v1alpha1.Switch:
		if !gjson.ValidBytes(in.body) {
			return nil, &Error{Status: http.StatusBadRequest, Node: n.name, Message: "the request is not JSON, so no condition of the Switch can match it"}
		}
		for _, s := range n.steps {
			if s.condition == "" || Match(in.body, s.condition) {
				return h.call(ctx, t, n, s, in, stream, depth)
			}
		}
		return nil, &Error{Status: http.StatusNotFound, Node: n.name, Message: "no step's condition matches the request"}
	case v1alpha1.Ensemble:
		return h.ensemble(ctx, t, n, in, depth)
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
func (h *Handler) sequence(ctx context.Context, t *trip, n *node, in *input, stream bool, depth int) (*reply, error) {
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
		rep, err := h.call(ctx, t, n, s, stepIn, stream && last, depth)
		if err != nil {
			if s.hard || ctx.Err() != nil {
				return nil, err
			}
			rep = asError(err).reply()
		}
		if s.hard && rep.status/100 != 2 {
			return rep, nil
		}
		if !last {
			if _, err := rep.bytes(); err != nil {
				return nil, h.stepFailure(ctx, n, s, err)
			}
		}
		prev = rep
	}
	return prev, nil
}

// ensemble calls every step at once and answers a JSON object with each
// step's response under its name. A Hard step that fails fails the node; a
// Soft one's failure is its entry.
func (h *Handler) ensemble(ctx context.Context, t *trip, n *node, in *input, depth int) (*reply, error) {
	results := make([]*reply, len(n.steps))
	errs := make([]error, len(n.steps))
	var wg sync.WaitGroup
	for i := 1; i < len(n.steps); i++ {
		wg.Go(func() { results[i], errs[i] = h.call(ctx, t, n, n.steps[i], in, false, depth) })
	}
	results[0], errs[0] = h.call(ctx, t, n, n.steps[0], in, false, depth)
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
	return &reply{status: http.StatusOK, contentType: jsonType, body: out}, nil
}

// call runs one step: a call to its URL or a run through its node.
func (h *Handler) call(ctx context.Context, t *trip, n *node, s *step, in *input, stream bool, depth int) (*reply, error) {
	if err := ctx.Err(); err != nil {
		// The client has gone (or the graph's timeout passed): no step
		// is called for an answer nobody reads.
		return nil, err
	}
	if s.node != nil {
		return h.run(ctx, t, s.node, in, stream, depth+1)
	}
	if int(t.calls.Add(1)) > h.o.MaxStepCalls {
		return nil, &Error{Status: http.StatusInternalServerError, Node: n.name, Step: s.name,
			Message: "the request would make more than " + strconv.Itoa(h.o.MaxStepCalls) + " step calls, the router's limit (--max-step-calls)"}
	}
	start := time.Now()
	rep, err := s.upstream.call(ctx, in, h.propagate.stepHeader(in.header), stream)
	if err != nil {
		err = h.stepFailure(ctx, n, s, err)
	}
	status := 0
	if rep != nil {
		status = rep.status
	}
	s.metrics.observe(start, status, err)
	return rep, err
}

// stepFailure turns a failed call into an Error naming the node and step:
// 504 when it ran out of time, 502 otherwise. The client's message says
// what went wrong without the step's URL or address, which are the
// cluster's business; the log has them.
func (h *Handler) stepFailure(ctx context.Context, n *node, s *step, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	h.o.Log.Warn("A step call failed", "node", n.name, "step", s.name, "url", s.upstream.url, "error", err.Error())
	var ne net.Error
	var tooLarge *errTooLarge
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Node: n.name, Step: s.name, Message: "the step did not answer in time"}
	case errors.As(err, &tooLarge):
		return &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: tooLarge.Error() + " (--max-response-body-bytes)"}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: "the step could not be reached"}
	case isTLSError(err):
		return &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: "the step's TLS handshake failed"}
	}
	return &Error{Status: http.StatusBadGateway, Node: n.name, Step: s.name, Message: "the step closed the connection without a complete response"}
}
