package testenv

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// Reconciles counts the finished reconciles of each object, by controller,
// from the lines controller-runtime logs at the end of each request
// ("Reconcile successful" and "Reconcile done, ..." at V(5), "Reconciler
// error"). A test's negative check ("nothing is written") starts only after
// evidence that the reconcile it means to observe ran: a reconcile of that
// very object, not of any object in the process. A requeue storm shows as
// reconciles, not writes.
type Reconciles struct {
	mu sync.Mutex
	n  map[string]int
}

// NewReconciles returns an empty count; Logger feeds it.
func NewReconciles() *Reconciles { return &Reconciles{n: map[string]int{}} }

// Of is the number of finished reconciles of namespace/name by controller.
func (c *Reconciles) Of(controller, namespace, name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[controller+"|"+namespace+"/"+name]
}

func (c *Reconciles) count(values []any) {
	v := map[string]any{}
	for i := 0; i+1 < len(values); i += 2 {
		if k, ok := values[i].(string); ok {
			v[k] = values[i+1]
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[fmt.Sprintf("%v|%v/%v", v["controller"], v["namespace"], v["name"])]++
}

// Logger is a logger that writes through sink and counts into c: set it
// as controller-runtime's logger before the manager starts.
func (c *Reconciles) Logger(sink logr.LogSink) logr.Logger {
	return logr.New(countingSink{LogSink: sink, counts: c})
}

// countingSink passes log lines on and counts the finished reconciles.
type countingSink struct {
	logr.LogSink
	counts *Reconciles
	values []any
}

func (s countingSink) Enabled(level int) bool { return level == 5 || s.LogSink.Enabled(level) }

func (s countingSink) Info(level int, msg string, kv ...any) {
	if level == 5 && (msg == "Reconcile successful" || strings.HasPrefix(msg, "Reconcile done")) {
		s.counts.count(append(slices.Clone(s.values), kv...))
	}
	if s.LogSink.Enabled(level) {
		s.LogSink.Info(level, msg, kv...)
	}
}

func (s countingSink) Error(err error, msg string, kv ...any) {
	if msg == "Reconciler error" {
		s.counts.count(append(slices.Clone(s.values), kv...))
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	return countingSink{s.LogSink.WithValues(kv...), s.counts, append(slices.Clone(s.values), kv...)}
}

func (s countingSink) WithName(name string) logr.LogSink {
	return countingSink{s.LogSink.WithName(name), s.counts, s.values}
}
