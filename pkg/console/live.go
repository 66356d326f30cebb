package console

import (
	"context"
	"fmt"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving"
)

// Live streams are bounded in time (the browser reconnects, listing
// again) and quiet ones are kept open by a comment line.
const (
	streamLifetime = 30 * time.Minute
	heartbeat      = 25 * time.Second
	// coalesce is the least time between two change events: a rollout
	// changes a status several times a second.
	coalesce = time.Second
	// maxNamespaceWatches bounds the watches of one stream for a user
	// without a right across namespaces, followed namespace by namespace.
	maxNamespaceWatches = 20
)

// watchTarget is one watch a page's stream holds.
type watchTarget struct {
	list func() client.ObjectList
	opts []client.ListOption
	// acrossNamespaces is a watch of every namespace, which a user who may
	// not make one gets namespace by namespace instead.
	acrossNamespaces bool
}

// live is a page's stream of server-sent events: an event "change" each
// time something the page shows changes, from watches made as the user.
// A page the user may watch nothing of gets 204, which tells the browser
// not to reconnect.
func (s *Server) live(w http.ResponseWriter, r *http.Request, c client.WithWatch) {
	caller, _ := r.Context().Value(callerKey{}).(string)
	if !s.takeStream(caller) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many live pages are open", http.StatusServiceUnavailable)
		return
	}
	defer s.releaseStream(caller)
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), streamLifetime)
	defer cancel()
	changes := make(chan struct{}, 1)
	started := 0
	follow := func(t watchTarget) error {
		wi, err := startWatch(ctx, c, t)
		if err == nil {
			started++
			go forward(ctx, cancel, wi, changes)
		}
		return err
	}
	var namespaces []string
	looked, budget := false, maxNamespaceWatches
	for _, t := range liveTargets(r) {
		if err := follow(t); !apierrors.IsForbidden(err) || !t.acrossNamespaces {
			continue // followed; or nothing to follow there (not allowed, not installed)
		}
		// A user who may not watch across namespaces is followed in the
		// namespaces the list page looks in for them, where they may.
		if !looked {
			namespaces, _, _ = s.namespacesOf(ctx, c)
			looked = true
		}
		for _, ns := range namespaces {
			if budget == 0 {
				break
			}
			if follow(watchTarget{list: t.list, opts: []client.ListOption{client.InNamespace(ns)}}) == nil {
				budget--
			}
		}
	}
	if started == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 5000\n\n")
	flusher.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": ping\n\n")
		case <-changes:
			fmt.Fprint(w, "event: change\ndata: {}\n\n")
			flusher.Flush()
			select {
			case <-ctx.Done():
				return
			case <-time.After(coalesce):
			}
			continue
		}
		flusher.Flush()
	}
}

// takeStream reserves a stream for the caller, within the console's bound
// and the caller's share of it.
func (s *Server) takeStream(caller string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.userStreams[caller] >= max(s.opts.MaxStreams/8, 1) {
		return false
	}
	select {
	case s.streams <- struct{}{}:
	default:
		return false
	}
	s.userStreams[caller]++
	return true
}

func (s *Server) releaseStream(caller string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	<-s.streams
	if s.userStreams[caller]--; s.userStreams[caller] == 0 {
		delete(s.userStreams, caller)
	}
}

// liveTargets are the watches of a page: the services of the list (in its
// namespace, or all), or one service, its Events and its Deployments.
func liveTargets(r *http.Request) []watchTarget {
	q := r.URL.Query()
	ns := q.Get("namespace")
	if name := q.Get("name"); name != "" {
		k, ok := pageKind(q.Get("kind"))
		if !ok || ns == "" {
			return nil
		}
		return []watchTarget{
			{list: k.NewList, opts: []client.ListOption{client.InNamespace(ns), client.MatchingFields{"metadata.name": name}}},
			{list: func() client.ObjectList { return &corev1.EventList{} },
				opts: []client.ListOption{client.InNamespace(ns), client.MatchingFields{"involvedObject.name": name}}},
			// Its Deployments: their replicas change without the
			// service's status changing once it is Ready.
			{list: func() client.ObjectList { return &appsv1.DeploymentList{} },
				opts: []client.ListOption{client.InNamespace(ns), client.MatchingLabels{ownerLabel(k.Name): name}}},
		}
	}
	var out []watchTarget
	for _, k := range serving.ServiceKinds {
		t := watchTarget{list: k.NewList, acrossNamespaces: ns == ""}
		if ns != "" {
			t.opts = []client.ListOption{client.InNamespace(ns)}
		}
		out = append(out, t)
	}
	return out
}

// startWatch watches from the present: a list of one item gives the
// resourceVersion to start at, so that the objects that already exist are
// no change.
func startWatch(ctx context.Context, c client.WithWatch, t watchTarget) (watch.Interface, error) {
	l := t.list()
	if err := c.List(ctx, l, append([]client.ListOption{client.Limit(1)}, t.opts...)...); err != nil {
		return nil, err
	}
	raw := &metav1.ListOptions{ResourceVersion: l.GetResourceVersion(), AllowWatchBookmarks: true}
	return c.Watch(ctx, t.list(), append(t.opts, &client.ListOptions{Raw: raw})...)
}

// forward turns a watch's events into change signals; a watch that ends
// ends the stream (the browser reconnects and watches again).
func forward(ctx context.Context, cancel context.CancelFunc, wi watch.Interface, changes chan<- struct{}) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				cancel()
				return
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			select {
			case changes <- struct{}{}:
			default: // one is pending already
			}
		}
	}
}
