package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Auth is how the console knows whose credentials a request reads with.
type Auth string

const (
	// AuthLocal serves one user, whose kubeconfig the console reads with:
	// `serval console` on a workstation. A request must carry the secret
	// of the URL the console printed (as a query parameter once, then as a
	// cookie), so that another local user who finds the port reads nothing.
	AuthLocal Auth = "local"
	// AuthForwarded serves many users behind an authenticating proxy
	// (oauth2-proxy, an ingress with OIDC): each request's bearer token,
	// from Authorization or X-Forwarded-Access-Token, is the one every
	// read of that request is made with.
	AuthForwarded Auth = "forwarded"
)

// cookiePrefix names the cookie that holds the local secret after the
// first request. Browsers share cookies across a host's ports, so each
// console's cookie is named after its own secret: two consoles on one
// machine (two clusters) do not overwrite each other's.
const cookiePrefix = "serval-console-"

// cookieName is this console's cookie: the prefix and the first 8
// characters of the secret's hash.
func (s *Server) cookieName() string {
	sum := sha256.Sum256([]byte(s.secret))
	return cookiePrefix + hex.EncodeToString(sum[:4])
}

// requestTimeout bounds the reads of one page.
const requestTimeout = 15 * time.Second

// Options configure a Server.
type Options struct {
	// Config is the API server to read from, with the local user's
	// credentials (AuthLocal) or the console's own (AuthForwarded: used
	// for discovery and, with ListNamespaces, namespace names only).
	Config *rest.Config
	Auth   Auth
	// DefaultNamespace is where to look when the user may list neither
	// across namespaces nor the namespaces themselves (the kubeconfig's
	// namespace).
	DefaultNamespace string
	// ListNamespaces lets the console list namespace names with its own
	// credentials, for users who may read in some namespaces but not list
	// them. Only the names: every read of a service is the user's.
	ListNamespaces bool
	// MaxRows bounds the services the list page shows, and what one
	// request lists of each kind; 0 means 2000.
	MaxRows int
	// MaxStreams bounds the live-update streams open at once (each holds
	// a few watches on the API server); 0 means 64. One caller may hold
	// at most an eighth of them (at least one).
	MaxStreams int
}

// Server is the console's HTTP handler.
type Server struct {
	opts    Options
	clients *clients
	secret  string
	pages   map[string]*template.Template
	mux     *http.ServeMux
	streams chan struct{}
	// userStreams counts each caller's open streams, by a hash of the
	// caller's token: one user cannot take every stream.
	mu          sync.Mutex
	userStreams map[string]int
}

// New returns a console server.
func New(o Options) (*Server, error) {
	if o.Auth != AuthLocal && o.Auth != AuthForwarded {
		return nil, fmt.Errorf("auth %q is neither %q nor %q", o.Auth, AuthLocal, AuthForwarded)
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = 64
	}
	if o.MaxRows == 0 {
		o.MaxRows = defaultMaxRows
	}
	cs, err := newClients(o.Config, o.Auth == AuthForwarded)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, clients: cs, pages: pages, mux: http.NewServeMux(), streams: make(chan struct{}, o.MaxStreams),
		userStreams: map[string]int{}}
	if o.Auth == AuthLocal {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		s.secret = hex.EncodeToString(b)
	}
	staticFS, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(staticFS)))
	s.mux.HandleFunc("GET /{$}", s.user(s.servicesPage))
	s.mux.HandleFunc("GET /services/{kind}/{namespace}/{name}", s.user(s.servicePage))
	s.mux.HandleFunc("GET /live", s.user(s.live))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return s, nil
}

// URL is the address to open for a console listening at base
// (http://127.0.0.1:8080): with AuthLocal, it carries the secret.
func (s *Server) URL(base string) string {
	base = strings.TrimSuffix(base, "/") + "/"
	if s.secret == "" {
		return base
	}
	return base + "?token=" + s.secret
}

// ServeHTTP implements http.Handler: the console's pages, read-only.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Only this origin's own files; no frames, no referrer to elsewhere.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the console is read-only", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// callerKey holds, in a request's context, a hash of its caller's token.
type callerKey struct{}

// errUnauthenticated is a request without the credentials its mode needs.
var errUnauthenticated = errors.New("unauthenticated")

// token returns the bearer token of a forwarded request; for a local one,
// "" once the request carries the console's secret.
func (s *Server) token(w http.ResponseWriter, r *http.Request) (string, bool, error) {
	if s.opts.Auth == AuthForwarded {
		if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && t != "" {
			return t, false, nil
		}
		if t := r.Header.Get("X-Forwarded-Access-Token"); t != "" {
			return t, false, nil
		}
		return "", false, errUnauthenticated
	}
	if q := r.URL.Query().Get("token"); q != "" && s.matches(q) {
		http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The secret leaves the address bar (and the history) at once.
		u := *r.URL
		v := u.Query()
		v.Del("token")
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return "", true, nil
	}
	if c, err := r.Cookie(s.cookieName()); err == nil && s.matches(c.Value) {
		return "", false, nil
	}
	return "", false, errUnauthenticated
}

func (s *Server) matches(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.secret)) == 1
}

// user wraps a handler that reads with the caller's credentials.
func (s *Server) user(h func(http.ResponseWriter, *http.Request, client.WithWatch)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, redirected, err := s.token(w, r)
		if redirected {
			return
		}
		if err != nil {
			msg := "Open the address `serval console` printed: it carries this console's secret."
			if s.opts.Auth == AuthForwarded {
				msg = "No bearer token came with the request: the console reads as you, so it must sit behind a proxy that sends your token (Authorization or X-Forwarded-Access-Token)."
			}
			s.renderError(w, http.StatusUnauthorized, msg)
			return
		}
		c, err := s.clients.forToken(token)
		if err != nil {
			logf.FromContext(r.Context()).Error(err, "Make a client for a console request")
			s.renderError(w, http.StatusInternalServerError, "The console could not make a client: "+err.Error())
			return
		}
		sum := sha256.Sum256([]byte(token))
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, hex.EncodeToString(sum[:]))), c)
	}
}
