package router

import (
	"net/http"
)

// BodyBudget bounds the request bodies a data-plane handler other than the
// graph router (the activator, which holds requests while a component
// starts) keeps in memory at once, with the router's reader: each buffer
// is taken from the budget before it is made and grows with the bytes that
// arrive, never with what a client announces.
type BodyBudget struct{ budget bufferBudget }

// NewBodyBudget is a budget of limit bytes; busy is the refusal's message
// once it is spent (it names the setting that raises it).
func NewBodyBudget(limit int64, busy string) *BodyBudget {
	return &BodyBudget{budget: bufferBudget{limit: limit, busy: busy}}
}

// Held is the bytes taken now.
func (b *BodyBudget) Held() int64 { return b.budget.used.Load() }

// ReadBody reads r's body into memory, up to limit bytes, taking every
// buffer from the budget before it is made. release gives them back: call
// it once the body is no longer used. On an error nothing stays taken;
// BodyFailure words it for the client.
func (b *BodyBudget) ReadBody(r *http.Request, limit int64) (body []byte, release func(), err error) {
	res := &reservation{budget: &b.budget}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, res.release, nil
	}
	body, err = readCapped(r.Body, r.ContentLength, limit, "the request body", nil, res)
	if err != nil {
		res.release()
		return nil, nil, err
	}
	return body, res.release, nil
}

// BodyFailure is the client's answer to a ReadBody error: 503 with
// Retry-After when the budget is spent, 413 past the limit, 408 when the
// body did not arrive in time, 400 otherwise.
func BodyFailure(err error, limit int64) *Error {
	return (&requestBody{}).failure(err, limit)
}
