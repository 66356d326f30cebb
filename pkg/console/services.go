package console

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// defaultMaxRows bounds the services one page lists (Options.MaxRows);
// past it the page says so and offers the namespace filter.
const defaultMaxRows = 2000

// maxNamespaces bounds the namespaces a user without a cluster-wide right
// is looked for in, one list each.
const maxNamespaces = 200

// Row is one service of the list.
type Row struct {
	Kind, Namespace, Name string
	// Ready is the Ready condition's status (True, False, Unknown, or ""
	// before the first status); Reason its reason.
	Ready, Reason string
	URL, Runtime  string
	Age           string
}

// Link is the service's page.
func (r Row) Link() string { return servicePath(r.Kind, r.Namespace, r.Name) }

// State is the CSS state of the Ready column.
func (r Row) State() string { return conditionState(r.Ready) }

func servicePath(kind, namespace, name string) string {
	return "/services/" + strings.ToLower(kind) + "/" + namespace + "/" + name
}

// rows are the list's services as rows.
func rows(l client.ObjectList) []Row {
	items, err := meta.ExtractList(l)
	if err != nil {
		return nil
	}
	out := make([]Row, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			out = append(out, rowOf(o))
		}
	}
	return out
}

// rowOf reads a service's row: its Ready condition, URL and what serves
// it (an InferenceService's model format and runtime, a graph's root
// router, an LLM's model).
func rowOf(obj client.Object) Row {
	var kind, url, runtime string
	switch o := obj.(type) {
	case *v1beta1.InferenceService:
		kind, url = "InferenceService", o.Status.URL
		runtime = o.Status.ServingRuntimeName
		if runtime == "" {
			runtime = o.Status.ClusterServingRuntimeName
		}
		if m := o.Spec.Predictor.Model; m != nil && m.ModelFormat.Name != "" {
			runtime = strings.TrimSuffix(m.ModelFormat.Name+" · "+runtime, " · ")
		}
	case *v1alpha1.InferenceGraph:
		kind, url, runtime = "InferenceGraph", o.Status.URL, "router"
		if root, ok := o.Spec.Nodes[v1alpha1.GraphRootNode]; ok {
			runtime = string(root.RouterType) + " router"
		}
	case *v1alpha2.LLMInferenceService:
		kind, url, runtime = "LLMInferenceService", o.Status.URL, o.Spec.Model.URI
		if o.Spec.Model.Name != nil && *o.Spec.Model.Name != "" {
			runtime = *o.Spec.Model.Name
		}
	}
	r := Row{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), URL: url, Runtime: runtime,
		Age: age(obj.GetCreationTimestamp().Time)}
	if c := meta.FindStatusCondition(conditionsOf(obj), "Ready"); c != nil {
		r.Ready, r.Reason = string(c.Status), c.Reason
	}
	return r
}

// conditionsOf are a service's status conditions.
func conditionsOf(obj client.Object) []metav1.Condition {
	if o, ok := obj.(serving.Service); ok {
		return o.GetConditions()
	}
	return nil
}

func age(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(time.Since(t))
}

// Listing is what the list page shows: the rows, and what the user could
// not read.
type Listing struct {
	Rows []Row
	// Namespaces are the namespaces looked in one by one; nil when every
	// kind was listed across namespaces.
	Namespaces []string
	// Hidden says what the user may not read ("InferenceGraph in team-b")
	// in the namespaces where they may read some kind.
	Hidden []string
	// HiddenNamespaces counts the namespaces the user may read no service
	// in: a count, not their names, which such a user may not list.
	HiddenNamespaces int
	// Guessed is set when the user may list neither the services across
	// namespaces nor the namespaces: Namespaces is then only the
	// kubeconfig's namespace (or none), and the page asks for theirs.
	Guessed bool
	// Truncated is set when more than Max services matched.
	Truncated bool
	Max       int
}

// listServices lists the services of every kind the user may read: across
// namespaces where the user may, else namespace by namespace.
func (s *Server) listServices(ctx context.Context, c client.Reader, only string) (Listing, error) {
	var out Listing
	var perNamespace []serving.ServiceKind
	for _, k := range serving.ServiceKinds {
		l := k.NewList()
		// A page lists at most MaxRows of a kind: what one request holds is
		// bounded, whatever the cluster's size.
		opts := []client.ListOption{client.Limit(int64(s.opts.MaxRows))}
		if only != "" {
			opts = append(opts, client.InNamespace(only))
		}
		err := c.List(ctx, l, opts...)
		switch {
		case err == nil:
			out.Rows = append(out.Rows, rows(l)...)
			out.Truncated = out.Truncated || l.GetContinue() != ""
		case apierrors.IsForbidden(err) && only == "":
			perNamespace = append(perNamespace, k)
		case apierrors.IsForbidden(err):
			out.Hidden = append(out.Hidden, k.Name+" in "+only)
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			// The kind's CRD is not installed: nothing of it to show.
		default:
			return out, err
		}
	}
	if len(perNamespace) > 0 {
		nss, guessed, err := s.namespacesOf(ctx, c)
		if err != nil {
			return out, err
		}
		out.Namespaces, out.Guessed = nss, guessed
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		var firstErr error
		forbidden := map[string][]string{}
		for _, ns := range nss {
			for _, k := range perNamespace {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					mu.Lock()
					full := len(out.Rows) >= s.opts.MaxRows
					out.Truncated = out.Truncated || full
					mu.Unlock()
					if full {
						return
					}
					l := k.NewList()
					err := c.List(ctx, l, client.InNamespace(ns), client.Limit(int64(s.opts.MaxRows)))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						out.Rows = append(out.Rows, rows(l)...)
						out.Truncated = out.Truncated || l.GetContinue() != ""
					case apierrors.IsForbidden(err):
						forbidden[ns] = append(forbidden[ns], k.Name)
					case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
					default:
						if firstErr == nil {
							firstErr = err
						}
					}
				}()
			}
		}
		wg.Wait()
		if firstErr != nil {
			return out, firstErr
		}
		for ns, ks := range forbidden {
			if len(ks) == len(perNamespace) {
				out.HiddenNamespaces++
				continue
			}
			for _, k := range ks {
				out.Hidden = append(out.Hidden, k+" in "+ns)
			}
		}
	}
	slices.SortFunc(out.Rows, func(a, b Row) int {
		return strings.Compare(a.Namespace+"/"+a.Kind+"/"+a.Name, b.Namespace+"/"+b.Kind+"/"+b.Name)
	})
	slices.Sort(out.Hidden)
	if len(out.Rows) > s.opts.MaxRows {
		out.Rows, out.Truncated = out.Rows[:s.opts.MaxRows], true
	}
	out.Max = s.opts.MaxRows
	return out, nil
}

// namespacesOf are the namespaces to look in for a user who may not list
// a kind across namespaces: the ones the user may list, else (with
// ListNamespaces) the ones the console may, else the default namespace
// (the kubeconfig's), guessed.
func (s *Server) namespacesOf(ctx context.Context, c client.Reader) (nss []string, guessed bool, err error) {
	var l corev1.NamespaceList
	err = c.List(ctx, &l)
	if apierrors.IsForbidden(err) && s.opts.ListNamespaces {
		err = s.clients.own.List(ctx, &l)
	}
	switch {
	case apierrors.IsForbidden(err):
		if s.opts.DefaultNamespace == "" {
			return nil, true, nil
		}
		return []string{s.opts.DefaultNamespace}, true, nil
	case err != nil:
		return nil, false, err
	}
	var out []string
	for _, ns := range l.Items {
		out = append(out, ns.Name)
	}
	slices.Sort(out)
	if len(out) > maxNamespaces {
		out = out[:maxNamespaces]
	}
	return out, false, nil
}
