package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// unreachable is an API server no request reaches: these tests stop
// before any read.
var unreachable = &rest.Config{Host: "https://127.0.0.1:1"}

func get(s *Server, target string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestLocalSecret: locally, a request without the printed secret reads
// nothing; the secret in the address becomes an HttpOnly, SameSite cookie
// and leaves the address at once; a wrong one is refused.
func TestLocalSecret(t *testing.T) {
	s, err := New(Options{Config: unreachable, Auth: AuthLocal})
	require.NoError(t, err)
	assert.Regexp(t, `^http://127.0.0.1:9/\?token=[0-9a-f]{32}$`, s.URL("http://127.0.0.1:9"))

	assert.Equal(t, http.StatusUnauthorized, get(s, "/", nil).Code)
	assert.Equal(t, http.StatusUnauthorized, get(s, "/?token=0123", nil).Code, "a wrong secret")
	assert.Equal(t, http.StatusUnauthorized, get(s, "/", http.Header{"Cookie": {s.cookieName() + "=nope"}}).Code)

	w := get(s, "/?namespace=team-a&token="+s.secret, nil)
	assert.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/?namespace=team-a", w.Header().Get("Location"), "the secret leaves the address")
	cookie := w.Result().Cookies()
	require.Len(t, cookie, 1)
	assert.Equal(t, s.secret, cookie[0].Value)
	assert.True(t, cookie[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookie[0].SameSite)

	// Another console on the machine names its cookie otherwise.
	other, err := New(Options{Config: unreachable, Auth: AuthLocal})
	require.NoError(t, err)
	assert.NotEqual(t, s.cookieName(), other.cookieName())
	assert.Equal(t, s.cookieName(), cookie[0].Name)

	// With the cookie the request reaches the reads (which fail here).
	w = get(s, "/", http.Header{"Cookie": {s.cookieName() + "=" + s.secret}})
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "Reading the services failed")
}

// TestForwardedTokenIsRequired: in the cluster, a request without a
// bearer token reads nothing.
func TestForwardedTokenIsRequired(t *testing.T) {
	s, err := New(Options{Config: unreachable, Auth: AuthForwarded})
	require.NoError(t, err)
	w := get(s, "/", nil)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Body.String(), "No bearer token came with the request")
	assert.Equal(t, http.StatusBadGateway, get(s, "/", http.Header{"Authorization": {"Bearer abc"}}).Code)
	assert.Equal(t, http.StatusBadGateway, get(s, "/", http.Header{"X-Forwarded-Access-Token": {"abc"}}).Code)
}

// TestReadOnlyAndHeaders: no method but GET and HEAD; every answer keeps
// scripts, styles and frames to the console's own origin.
func TestReadOnlyAndHeaders(t *testing.T) {
	s, err := New(Options{Config: unreachable, Auth: AuthForwarded})
	require.NoError(t, err)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(m, "/", strings.NewReader("{}")))
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, m)
	}
	w := get(s, "/static/live.js", nil)
	assert.Equal(t, http.StatusOK, w.Code)
	csp := w.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, http.StatusNotFound, get(s, "/services/deployment/default/x", http.Header{"Authorization": {"Bearer a"}}).Code, "not a service kind")
	assert.Equal(t, http.StatusNotFound, get(s, "/services/inferenceservice/Not_A_Namespace/x", http.Header{"Authorization": {"Bearer a"}}).Code)
	assert.Equal(t, http.StatusBadRequest, get(s, "/?namespace=..%2Fx", http.Header{"Authorization": {"Bearer a"}}).Code)
}

// TestStreamsAreShared: one caller holds at most an eighth of the
// streams; others still get theirs; a released stream is free again.
func TestStreamsAreShared(t *testing.T) {
	s, err := New(Options{Config: unreachable, Auth: AuthForwarded, MaxStreams: 16})
	require.NoError(t, err)
	assert.True(t, s.takeStream("a"))
	assert.True(t, s.takeStream("a"))
	assert.False(t, s.takeStream("a"), "a's share of 16 is 2")
	for i := range 14 {
		assert.True(t, s.takeStream(string(rune('b'+i/2))), i)
	}
	assert.False(t, s.takeStream("z"), "all 16 taken")
	s.releaseStream("a")
	assert.True(t, s.takeStream("z"))
	assert.Len(t, s.userStreams, 9, "a, b-h and z")
}
