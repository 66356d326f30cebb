package router

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
)

// bufferBudget is what the whole router may hold of request and response
// bodies in memory at once. Each body is read into buffers that grow with
// the bytes that arrive, never with what a client announces, and each
// buffer is taken from the budget before it is made: a few connections
// announcing large bodies cost nothing until their bytes come, and many
// that send them are answered 503 once the budget is spent, where they
// would otherwise take the process's memory.
type bufferBudget struct {
	limit int64
	used  atomic.Int64
	// busy is the refusal's wording past the limit; "" is the router's.
	busy string
}

// reservation is one request's share of the budget, given back whole when
// the request ends (its buffers are no longer read after that).
type reservation struct {
	budget *bufferBudget
	held   atomic.Int64
}

// errBusy is a buffer the budget could not give.
type errBusy struct {
	limit int64
	busy  string
}

func (e *errBusy) Error() string {
	if e.busy != "" {
		return e.busy
	}
	return "the router holds its limit of " + strconv.FormatInt(e.limit, 10) +
		" bytes of request and response bodies (--max-buffered-bytes); try again shortly"
}

// busyError is the client's answer to errBusy: 503, to be tried again.
func busyError(e *errBusy) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Message: e.Error(), RetryAfter: 1}
}

// take reserves n bytes, or fails with errBusy. A nil reservation (a
// caller outside a request, tests) takes without limit.
func (r *reservation) take(n int64) error {
	if r == nil || n <= 0 {
		return nil
	}
	if r.budget.used.Add(n) > r.budget.limit {
		r.budget.used.Add(-n)
		return &errBusy{limit: r.budget.limit, busy: r.budget.busy}
	}
	r.held.Add(n)
	return nil
}

// release gives back everything the request took.
func (r *reservation) release() {
	if r != nil {
		r.budget.used.Add(-r.held.Swap(0))
	}
}

type reservationKey struct{}

// withReservation carries a request's reservation to the step calls it
// makes.
func withReservation(ctx context.Context, r *reservation) context.Context {
	return context.WithValue(ctx, reservationKey{}, r)
}

func reservationFrom(ctx context.Context) *reservation {
	r, _ := ctx.Value(reservationKey{}).(*reservation)
	return r
}
