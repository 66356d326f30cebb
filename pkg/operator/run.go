package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
)

// Manager is the controller-runtime manager with what Run needs to tell
// why its caches do not sync.
type Manager struct {
	manager.Manager
	listErrors *listErrors
	// stopped is closed once Start has returned.
	stopped chan struct{}
}

// Stopped is closed once the manager Run started has stopped, which may be
// after Run returned: controller-runtime's manager does not stop while it
// waits for its caches to sync, whatever its context says, so Run stops
// waiting for it at its bounds.
func (m *Manager) Stopped() <-chan struct{} { return m.stopped }

// The bounds of Run by default.
const (
	DefaultCacheSyncTimeout = 2 * time.Minute
	DefaultShutdownTimeout  = 30 * time.Second
)

// TerminationMessagePath is where Kubernetes reads a container's last words
// (the pod's terminationMessagePath by default): `kubectl describe pod`
// shows them under the terminated state.
var TerminationMessagePath = "/dev/termination-log"

// Run starts the manager and returns when it stops. It fails, so that the
// process exits and its pod restarts with the reason in view, when the
// caches have not synced within syncTimeout (a Role missing a verb, an API
// server that keeps refusing a list: without the bound the manager would
// wait, unready, forever); the error names each kind and the API server's
// last answer for it. When ctx ends (SIGTERM), at start-up too, it waits
// shutdownTimeout at most for the manager to stop.
func (m *Manager) Run(ctx context.Context, syncTimeout, shutdownTimeout time.Duration) error {
	mgrCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan error, 1)
	go func() {
		defer close(m.stopped)
		stopped <- m.Start(mgrCtx)
	}()
	synced := make(chan struct{})
	go func() {
		if m.waitSynced(mgrCtx) {
			close(synced)
		}
	}()
	deadline := time.NewTimer(syncTimeout)
	defer deadline.Stop()
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
		return m.stop(cancel, stopped, shutdownTimeout, nil)
	case <-deadline.C:
		err := m.syncFailure(syncTimeout)
		log.FromContext(ctx).Error(err, "The caches did not sync: stopping")
		writeTerminationMessage(err.Error())
		// controller-runtime's manager does not stop while its caches
		// wait (see Stopped), and nothing has run yet that a stop would
		// finish: return at the bound, not the shutdown bound after it.
		cancel()
		return err
	case <-synced:
	}
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
		return m.stop(cancel, stopped, shutdownTimeout, nil)
	}
}

// stop cancels the manager and waits for it, at most timeout; cause, when
// set, is what Run returns.
func (m *Manager) stop(cancel context.CancelFunc, stopped <-chan error, timeout time.Duration, cause error) error {
	cancel()
	select {
	case err := <-stopped:
		if cause != nil {
			return cause
		}
		return err
	case <-time.After(timeout):
		return errors.Join(cause, fmt.Errorf("the manager did not stop within %s", timeout))
	}
}

// waitSynced polls until every informer has synced, the watched kinds'
// included; false when ctx ends first.
func (m *Manager) waitSynced(ctx context.Context) bool {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if informersSynced(ctx, m.GetCache(), inferenceservice.WatchedObjects()) == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// syncFailure names every kind that has not synced, with the last error
// the API server gave its list or watch.
func (m *Manager) syncFailure(timeout time.Duration) error {
	errs := m.listErrors.snapshot()
	failing := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, obj := range inferenceservice.WatchedObjects() {
		inf, err := m.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err == nil && !inf.HasSynced() {
			kind := fmt.Sprintf("%T", obj)
			failing[kind] = "no answer yet"
			if e, ok := errs[kind]; ok {
				failing[kind] = e
			}
		}
	}
	if len(failing) == 0 {
		return fmt.Errorf("the informer caches did not sync within %s", timeout)
	}
	// The kinds the API server refused are the cause; the others only
	// wait behind them (an informer shares the manager's start-up). They
	// are named alone when none was refused.
	refused := map[string]string{}
	for k, why := range failing {
		if _, ok := errs[k]; ok {
			refused[k] = why
		}
	}
	if len(refused) > 0 {
		failing = refused
	}
	kinds := make([]string, 0, len(failing))
	for k := range failing {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + ": " + failing[k]
	}
	return fmt.Errorf("the informer caches did not sync within %s (--cache-sync-timeout); check the manager's RBAC: %s", timeout, strings.Join(parts, "; "))
}

// writeTerminationMessage leaves msg where Kubernetes shows it for the
// terminated container; outside a pod there is no such file and nothing is
// written.
func writeTerminationMessage(msg string) {
	f, err := os.OpenFile(TerminationMessagePath, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(msg)
}

// listErrors keeps the last list or watch error of each informer, by the
// type it lists.
type listErrors struct {
	mu   sync.Mutex
	last map[string]string
}

func newListErrors() *listErrors { return &listErrors{last: map[string]string{}} }

// handler is the informers' watch error handler: it records the error,
// then logs it as client-go does.
func (l *listErrors) handler(ctx context.Context, r *toolscache.Reflector, err error) {
	if l == nil {
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
		return
	}
	l.mu.Lock()
	l.last[r.TypeDescription()] = err.Error()
	l.mu.Unlock()
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
}

func (l *listErrors) snapshot() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]string, len(l.last))
	for k, v := range l.last {
		out[k] = v
	}
	return out
}
