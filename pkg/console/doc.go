// Package console is Serval's read-only web console: the services of every
// kind across the namespaces a user may read, one service's conditions,
// children, Events and manifest, an InferenceGraph drawn as its nodes and
// steps, and an LLMInferenceService drawn as its path from the Gateway to
// its model pods.
//
// Every read is made with the user's own credentials: the kubeconfig's when
// `serval console` runs locally, the bearer token the user's request
// carries when it runs in the cluster behind an authenticating proxy. The
// API server's RBAC therefore decides what each user sees; the console
// holds no read right of its own beyond listing namespace names (in the
// cluster, to know where to look for a user who may not list them) and
// discovery. It serves GET requests only: it has no write action.
//
// Pages are server-rendered with html/template and inline SVG. A page
// follows changes through a server-sent event stream fed by watches, made
// with the same credentials, on what the page shows; a small script swaps
// the page's main element when it hears of one.
package console
