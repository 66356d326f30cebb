// Package activator holds the requests sent to a component that has no
// ready replica, asks for one, and forwards each held request once, in
// arrival order, as soon as a replica is ready: scale from zero without
// Knative, for Standard-mode components that KEDA scales to zero.
//
// Every request it holds is bounded: a component holds at most
// Limits.MaxHeld requests, each with a body of at most
// Limits.MaxBodyBytes (read before the request is held, so memory is
// bounded by their product), for at most Limits.HoldTimeout. A request
// past a bound, or held when the cold start fails or the activator shuts
// down, is answered 503 with Retry-After and a JSON body naming the
// component. A held request is forwarded at most once: a backend that
// fails it makes a 502, never a second try.
//
// KEDA learns of the demand through the scaler (Demand, Watch): held and
// in-flight requests per component are the metric of KEDA's external
// push scaler (package kedascaler).
package activator
