package console

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

//go:embed templates static
var assets embed.FS

// pageNames are the pages, each a template file drawn in the layout.
var pageNames = []string{"services", "service", "error"}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"clip": clip, "add": func(a, b int) int { return a + b }, "mul": func(a, b int) int { return a * b }}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/diagram.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// page is what every page's layout reads.
type page struct {
	Title string
	// Live is the address of the page's stream of changes; "" for none.
	Live string
	Data any
}

// render writes a page, rendered whole before the first byte so that a
// template error is an error page, not half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := s.pages[name].Execute(&buf, p); err != nil {
		logf.Log.Error(err, "Render a console page", "page", name)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorPage struct {
	Status  int
	Message string
}

func (s *Server) renderError(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, "error", page{Title: http.StatusText(status), Data: errorPage{Status: status, Message: msg}})
}

// servicesData is the list page's data.
type servicesData struct {
	Listing
	Namespace string
}

func (s *Server) servicesPage(w http.ResponseWriter, r *http.Request, c client.WithWatch) {
	ns := r.URL.Query().Get("namespace")
	if ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		s.renderError(w, http.StatusBadRequest, "namespace "+ns+" is no namespace name")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	l, err := s.listServices(ctx, c, ns)
	if err != nil {
		s.readError(w, err, "the services")
		return
	}
	live := "/live"
	if ns != "" {
		live += "?namespace=" + url.QueryEscape(ns)
	}
	s.render(w, http.StatusOK, "services", page{Title: "Services", Live: live, Data: servicesData{Listing: l, Namespace: ns}})
}

func (s *Server) servicePage(w http.ResponseWriter, r *http.Request, c client.WithWatch) {
	k, ok := pageKind(r.PathValue("kind"))
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		s.renderError(w, http.StatusNotFound, "There is no such service page.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	d, err := s.detail(ctx, c, k, ns, name)
	if err != nil {
		s.readError(w, err, k.Name+" "+ns+"/"+name)
		return
	}
	live := "/live?" + url.Values{"kind": {strings.ToLower(k.Name)}, "namespace": {ns}, "name": {name}}.Encode()
	s.render(w, http.StatusOK, "service", page{Title: k.Name + " " + ns + "/" + name, Live: live, Data: d})
}

// readError answers a read that failed: what the API server said, with its
// status where it means something to the user.
func (s *Server) readError(w http.ResponseWriter, err error, what string) {
	switch {
	case apierrors.IsNotFound(err):
		s.renderError(w, http.StatusNotFound, what+" does not exist.")
	case apierrors.IsForbidden(err):
		s.renderError(w, http.StatusForbidden, "You may not read "+what+".")
	case apierrors.IsUnauthorized(err):
		s.renderError(w, http.StatusUnauthorized, "The API server did not accept your credentials.")
	default:
		s.renderError(w, http.StatusBadGateway, "Reading "+what+" failed: "+err.Error())
	}
}
