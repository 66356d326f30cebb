package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// The agent's rights: the ClusterRole serval-node-agent (config/rbac/node-agent,
// generated from the lines below) reads the LocalModelNodes, writes their
// status (its part: copies and disks) and records Events; the Role
// serval-node-agent-config (config/rbac/node-agent/config-role.yaml) reads
// serval-config, by name, in the manager's namespace. It reads no Secret,
// ServiceAccount, Pod or Job, and creates nothing: the manager runs the
// downloads. The LocalModelNode read is cluster-wide because RBAC cannot
// narrow a list to one name; its cache holds only its node's.
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes/status,verbs=get;patch
// The agent records Events on LocalModelNodes only: cluster-scoped, so their
// Events are in the namespace default, where config/rbac/node-agent/config-role.yaml
// grants it events (and nowhere else).

// Agent keeps one node's copies for one node group: it makes the folders
// the node's models want, measures what the downloads left (size and
// digest, off the reconcile goroutine), checks the digests again every
// localModel.verifyPeriod, reports what it found (status.copies), and
// deletes the folders no cache wants and no volume binds, after
// localModel.deleteGracePeriod.
type Agent struct {
	// Client reads the node's LocalModelNode from the agent's cache, and
	// writes its status.
	Client   client.Client
	Recorder events.EventRecorder
	Config   *config.Store
	// Node and Group are the node and the group the agent serves; Disk the
	// group's disk on the node.
	Node, Group string
	Disk        Disk

	mu sync.Mutex
	// unwantedSince is when each folder no entry wants was first seen so.
	unwantedSince map[string]time.Time
	// measureFrom is when the agent first wanted a measure of a copy after
	// a download (by folder and Job): a measure that started before does
	// not count.
	measureFrom map[string]time.Time
	// tooLarge are the reports of the copies deleted as too large, by
	// folder.
	tooLarge map[string]v1alpha1.LocalModelCopy
	// Clock, when set, is the time (tests); else time.Now.
	Clock func() time.Time

	hashOnce sync.Once
	hasher   *hasher
	// status writes the agent's part of the node's status; made once.
	statusOnce sync.Once
	status     *statuswriter.Writer[v1alpha1.LocalModelNodeStatus]
	// measures brings a reconcile when a measure ends.
	measures chan event.GenericEvent
}

// Reconcile brings the node's folders in step with its LocalModelNode and
// reports them.
func (a *Agent) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != a.Node {
		return ctrl.Result{}, nil
	}
	cfg, err := a.Config.InForce(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	lmn := &v1alpha1.LocalModelNode{}
	if err := a.Client.Get(ctx, req.NamespacedName, lmn); err != nil {
		if apierrors.IsNotFound(err) {
			// No list is no evidence that nothing is wanted (the object
			// deleted by hand, a restore, a cache read too early): the
			// copies stay.
			log.FromContext(ctx).Info("The node's LocalModelNode is not there: deleting nothing", "node", a.Node)
			return ctrl.Result{RequeueAfter: cfg.LocalModel.ResyncPeriod}, nil
		}
		return ctrl.Result{}, err
	}
	if err := a.Disk.Ensure(); err != nil {
		return ctrl.Result{}, fmt.Errorf("the models folder on %s: %w", a.Disk.Root, err)
	}
	entries := a.entries(lmn)
	if err := a.removeUnwanted(ctx, lmn, entries, cfg.LocalModel.DeleteGracePeriod); err != nil {
		return ctrl.Result{}, err
	}
	copies := map[string]v1alpha1.LocalModelCopy{}
	byKey := map[string]v1alpha1.LocalModelCopy{}
	for _, e := range entries {
		key := v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)
		if c, done := byKey[key]; done {
			// Another cache of the same URI and owner scope: one folder,
			// one report.
			copies[e.StatusKey()] = c
			continue
		}
		// The folder exists before any download, so that the volume of
		// the folder can be mounted (a local volume's path must exist).
		if err := a.Disk.EnsureFolder(key); err != nil {
			return ctrl.Result{}, fmt.Errorf("the folder models/%s: %w", key, err)
		}
		c, err := a.look(lmn, e, key, cfg)
		if err != nil {
			return ctrl.Result{}, err
		}
		copies[e.StatusKey()], byKey[key] = c, c
	}
	if err := a.report(ctx, lmn, entries, copies); err != nil {
		if apierrors.IsConflict(err) {
			// The manager wrote meanwhile, or the cache is behind: again,
			// soon, from what is there now.
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	// The list's and the manager's changes bring a reconcile; the resync
	// checks the folders.
	return ctrl.Result{RequeueAfter: cfg.LocalModel.ResyncPeriod}, nil
}

// conflictRetry is how soon a report that met a newer object is tried
// again.
const conflictRetry = 100 * time.Millisecond

// entries are the node's models on the agent's group.
func (a *Agent) entries(lmn *v1alpha1.LocalModelNode) []v1alpha1.LocalModelInfo {
	var out []v1alpha1.LocalModelInfo
	for _, e := range lmn.Spec.LocalModels {
		if e.NodeGroup == a.Group {
			out = append(out, e)
		}
	}
	return out
}

// look is what the agent finds of one model's folder. While the model's
// download Job runs, nothing (the files are being written). Then: Absent
// when it holds no file; a copy not yet measured since the latest Job is
// measured (Measuring, then Present or Failed); a copy measured before is
// verified.
func (a *Agent) look(lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, key string, cfg *config.Config) (v1alpha1.LocalModelCopy, error) {
	prev, reported := lmn.Status.Copies[e.StatusKey()]
	download := lmn.Status.Models[e.StatusKey()]
	if download.JobRunning {
		if !reported {
			prev = v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent}
		}
		return prev, nil
	}
	has, err := a.Disk.Has(key)
	if err != nil {
		return v1alpha1.LocalModelCopy{}, err
	}
	if !has {
		a.forgetMeasures(key)
		if c, ok := a.deletedAsTooLarge(key, download.Job); ok {
			// The agent deleted it as too large: that stays the report
			// until another download (remembered here too, in case the
			// report was not written).
			return c, nil
		}
		if prev.State == v1alpha1.CopyFailed && prev.Reason == modelcache.ReasonModelTooLarge && prev.Job == download.Job {
			return prev, nil
		}
		return v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent, Job: download.Job}, nil
	}
	if prev.Job == download.Job && (prev.State == v1alpha1.CopyPresent || prev.State == v1alpha1.CopyFailed) {
		return a.verified(lmn, e, key, prev, cfg), nil
	}
	return a.measured(lmn, e, key, download.Job, cfg)
}

// measured is the report of a copy a download left: Present with its size
// and digest, or, when it holds a file that is not regular (a FIFO, a
// device), Failed naming the file, with an Event: the agent never reads
// such a file, and a model has none. A copy larger than its cache declares
// fails and is deleted (localModel.oversizedCopy: fail), so that one
// tenant's cache cannot fill a disk others share; or is kept with a
// Warning (warn).
//
// The measure runs off the reconcile goroutine (see hasher): until it
// ends, the copy is Measuring.
func (a *Agent) measured(lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, key, job string, cfg *config.Config) (v1alpha1.LocalModelCopy, error) {
	bound := int64(-1)
	if cfg.LocalModel.FailOversizedCopies {
		bound = declared(e) // an oversized copy is deleted unread
	}
	m, ok := a.hasherFor(cfg).Result(key, a.wantMeasure(key, job), bound)
	if !ok {
		return v1alpha1.LocalModelCopy{State: v1alpha1.CopyMeasuring, Job: job}, nil
	}
	var irregular *IrregularFileError
	switch {
	case errors.As(m.err, &irregular):
		msg := fmt.Sprintf("the copy of %s in models/%s: %v", e.SourceModelUri, key, m.err)
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, modelcache.ReasonIrregularFile, "Measure", "%s: %s", e.StatusKey(), msg)
		return v1alpha1.LocalModelCopy{State: v1alpha1.CopyFailed, Job: job, Reason: modelcache.ReasonIrregularFile, Message: msg}, nil
	case m.err != nil:
		return v1alpha1.LocalModelCopy{}, fmt.Errorf("measure the model %s: %w", e.SourceModelUri, m.err)
	}
	present := v1alpha1.LocalModelCopy{State: v1alpha1.CopyPresent, Job: job, Bytes: m.size, Digest: m.digest}
	if limit := declared(e); limit >= 0 && m.size > limit {
		size := fmt.Sprintf("%d bytes", m.size)
		if m.atLeast {
			size = fmt.Sprintf("over %d bytes", limit)
		}
		msg := fmt.Sprintf("the copy of %s is %s, and the cache declares modelSize %s (%d bytes), which its node group's storageLimit counts: "+
			"raise modelSize, or cache a smaller model", e.SourceModelUri, size, e.ModelSize.String(), limit)
		if !cfg.LocalModel.FailOversizedCopies {
			a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, modelcache.ReasonModelTooLarge, "Measure", "%s: %s (kept: localModel.oversizedCopy is warn)", e.StatusKey(), msg)
			return present, nil
		}
		if err := a.Disk.Remove(key); err != nil {
			return v1alpha1.LocalModelCopy{}, fmt.Errorf("delete the oversized copy models/%s: %w", key, err)
		}
		a.forgetMeasures(key)
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, modelcache.ReasonModelTooLarge, "Measure", "%s: %s; the copy was deleted", e.StatusKey(), msg)
		failed := v1alpha1.LocalModelCopy{State: v1alpha1.CopyFailed, Job: job, Bytes: m.size, Reason: modelcache.ReasonModelTooLarge, Message: msg}
		a.rememberTooLarge(key, failed)
		return failed, nil
	}
	return present, nil
}

// verified is the report of a copy measured before: while its files are
// as they were (the same digest, measured again every
// localModel.verifyPeriod off the reconcile goroutine), Present; once they
// differ (written by hand, by a fault), Failed, reason CopyChanged, naming
// both digests, with an Event, until the files are as they were again or
// the folder is deleted (the manager then downloads it again). A changed
// copy is never deleted by the agent: pods may be reading it.
func (a *Agent) verified(lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, key string, prev v1alpha1.LocalModelCopy, cfg *config.Config) v1alpha1.LocalModelCopy {
	m, ok := a.hasherFor(cfg).Result(key, a.now().Add(-cfg.LocalModel.VerifyPeriod), -1)
	if !ok {
		return prev
	}
	next := prev
	var irregular *IrregularFileError
	switch {
	case errors.As(m.err, &irregular):
		next.State, next.Reason = v1alpha1.CopyFailed, modelcache.ReasonIrregularFile
		next.Message = fmt.Sprintf("the copy of %s in models/%s: %v", e.SourceModelUri, key, m.err)
	case m.err != nil:
		// Not a fact about the copy (a deadline, a read error): the report
		// stays, and the next period measures again.
		log.Log.Info("Could not verify a copy", "folder", key, "error", m.err.Error())
		return prev
	case prev.Digest == "" || m.digest == prev.Digest:
		// As measured (or first measured now: a folder that held a FIFO
		// and no longer does).
		next.State, next.Reason, next.Message = v1alpha1.CopyPresent, "", ""
		next.Bytes, next.Digest = m.size, m.digest
		return next
	default:
		next.State, next.Reason = v1alpha1.CopyFailed, modelcache.ReasonCopyChanged
		next.Message = fmt.Sprintf("the files of the copy of %s in models/%s changed since it was downloaded: its digest was %s and is %s (%d bytes); "+
			"delete the folder on the node to download it again", e.SourceModelUri, key, prev.Digest, m.digest, m.size)
	}
	if prev.Reason != next.Reason {
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, next.Reason, "Verify", "%s: %s", e.StatusKey(), next.Message)
	}
	return next
}

// wantMeasure is when the agent first wanted a measure of key after job.
func (a *Agent) wantMeasure(key, job string) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.measureFrom == nil {
		a.measureFrom = map[string]time.Time{}
	}
	id := key + "\x00" + job
	t, ok := a.measureFrom[id]
	if !ok {
		// One entry per folder: an earlier Job's is done with.
		for other := range a.measureFrom {
			if strings.HasPrefix(other, key+"\x00") {
				delete(a.measureFrom, other)
			}
		}
		t = a.now()
		a.measureFrom[id] = t
	}
	return t
}

// rememberTooLarge keeps the report of a copy the agent deleted as too
// large, for its folder and Job.
func (a *Agent) rememberTooLarge(key string, c v1alpha1.LocalModelCopy) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tooLarge == nil {
		a.tooLarge = map[string]v1alpha1.LocalModelCopy{}
	}
	a.tooLarge[key] = c
}

// deletedAsTooLarge is the report of the copy of key the agent deleted as
// too large after job, if it did.
func (a *Agent) deletedAsTooLarge(key, job string) (v1alpha1.LocalModelCopy, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.tooLarge[key]
	return c, ok && c.Job == job
}

// forgetMeasures drops what is known of a folder's measures (it is empty
// or gone).
func (a *Agent) forgetMeasures(key string) {
	a.mu.Lock()
	for id := range a.measureFrom {
		if strings.HasPrefix(id, key+"\x00") {
			delete(a.measureFrom, id)
		}
	}
	a.mu.Unlock()
	if a.hasher != nil {
		a.hasher.Forget(key)
	}
}

// hasherFor is the agent's hasher, made on first use with cfg's budget.
func (a *Agent) hasherFor(cfg *config.Config) *hasher {
	a.hashOnce.Do(func() {
		a.hasher = newHasher(a.Disk, cfg.LocalModel.HashBytesPerSecond, cfg.LocalModel.HashTimeout, a.measuredOne, a.now)
	})
	return a.hasher
}

// measuredOne brings a reconcile of the node once a measure ends.
func (a *Agent) measuredOne() {
	select {
	case a.measures <- event.GenericEvent{Object: &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: a.Node}}}:
	default: // one is pending already
	}
}

// declared is the bytes an entry's cache declares, -1 when it declares
// none (an entry written by an older manager).
func declared(e v1alpha1.LocalModelInfo) int64 {
	if e.ModelSize == nil {
		return -1
	}
	return e.ModelSize.Value()
}

// now is the agent's clock.
func (a *Agent) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

// report writes the agent's part of the node's status: the copies of its
// group's models and its disk's space. Only the keys of its group: the
// agents of two groups on one node do not undo each other's reports, and
// the manager's part is not in the patch.
func (a *Agent) report(ctx context.Context, lmn *v1alpha1.LocalModelNode, entries []v1alpha1.LocalModelInfo, copies map[string]v1alpha1.LocalModelCopy) error {
	next := lmn.Status.DeepCopy()
	if next.Copies == nil {
		next.Copies = map[string]v1alpha1.LocalModelCopy{}
	}
	for k := range next.Copies {
		if !a.listedElsewhere(lmn, k) {
			delete(next.Copies, k)
		}
	}
	for k, c := range copies {
		next.Copies[k] = c
	}
	if free, total, err := a.Disk.Space(); err == nil {
		if next.Disks == nil {
			next.Disks = map[string]v1alpha1.LocalModelDisk{}
		}
		next.Disks[a.Group] = v1alpha1.LocalModelDisk{Available: *roundedGi(free), Capacity: *roundedGi(total)}
	}
	// As read back: an empty map is not stored.
	if len(next.Copies) == 0 {
		next.Copies = nil
	}
	// Always with the resourceVersion (the manager writes the same
	// status): a merge patch computed from a cache that has not seen the
	// agent's last report would leave that report's fields (a failure's
	// reason) in place.
	a.statusOnce.Do(func() {
		a.status = &statuswriter.Writer[v1alpha1.LocalModelNodeStatus]{Client: a.Client, AlwaysLock: true,
			Status: func(o client.Object) *v1alpha1.LocalModelNodeStatus { return &o.(*v1alpha1.LocalModelNode).Status }}
	})
	_, err := a.status.Write(ctx, lmn, lmn.DeepCopy(), *next)
	return err
}

// listedElsewhere reports whether a status key belongs to an entry of
// another group (whose agent reports it).
func (a *Agent) listedElsewhere(lmn *v1alpha1.LocalModelNode, key string) bool {
	return slices.ContainsFunc(lmn.Spec.LocalModels, func(e v1alpha1.LocalModelInfo) bool {
		return e.StatusKey() == key && e.NodeGroup != a.Group
	})
}

// roundedGi rounds a byte count down to a tenth of a GiB, so the report
// does not change with every file written elsewhere on the disk.
func roundedGi(n int64) *resource.Quantity {
	const tenth = 1 << 30 / 10
	return resource.NewQuantity(n/tenth*tenth, resource.BinarySI)
}

// SetupWithManager registers the agent: its node's LocalModelNode (a
// change of its list, or of the manager's part of its status: a download
// started or ended, a folder bound or freed).
func (a *Agent) SetupWithManager(mgr ctrl.Manager) error {
	a.measures = make(chan event.GenericEvent, 1)
	return ctrl.NewControllerManagedBy(mgr).
		Named("serval-node-agent").
		For(&v1alpha1.LocalModelNode{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, managerWrote))).
		WatchesRawSource(source.Channel(a.measures, &handler.EnqueueRequestForObject{})).
		Complete(a)
}

// managerWrote passes the manager's new part of a node's status (and not
// the agents' own reports, which would loop).
var managerWrote = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*v1alpha1.LocalModelNode), e.ObjectNew.(*v1alpha1.LocalModelNode)
	return !reflect.DeepEqual(o.Status.Models, n.Status.Models) || !slices.Equal(o.Status.InUse, n.Status.InUse)
}}
