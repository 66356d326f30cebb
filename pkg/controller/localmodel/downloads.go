package localmodel

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=clusterstoragecontainers,verbs=get;list;watch

// Downloads runs the download Jobs of every node's models and writes the
// models' states (LocalModelNode status modelStatus, models, inUse) from
// the Jobs and from what each node's agent found on its disk (copies).
// The manager holds the rights a download needs (Jobs in the caches'
// namespaces, the credentials they name); the agents hold none of them.
type Downloads struct {
	// Client reads from the manager's cache and writes; APIReader reads
	// credentials and storage containers uncached.
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Config    *config.Store
	// Clock, when set, is the time (tests); else time.Now.
	Clock func() time.Time

	credentials *credentials.Memo
	status      *statuswriter.Writer[v1alpha1.LocalModelNodeStatus]
	// created are the Jobs created and not yet seen in the cache, by node
	// and status key: a reconcile before the cache shows a new Job must
	// not create a second.
	mu      sync.Mutex
	created map[string]createdJob
}

// Reasons of a model that waits, which its caches' Ready conditions carry.
const (
	// ReasonWaitingForAgent: the node's agent has not reported the model's
	// folder yet (just listed, or the agent is not running).
	ReasonWaitingForAgent = "WaitingForNodeAgent"
	// ReasonMeasuring: the download ended; the agent measures the copy.
	ReasonMeasuring = "Measuring"
	// ReasonModelMissing: a download succeeded and left no files.
	ReasonModelMissing = "ModelMissing"
	// ReasonJobNotSeen: the Job created is at the API server past
	// UnseenJobDeadline but not in the manager's cache.
	ReasonJobNotSeen = "JobNotSeen"
)

// ConflictRetry is how soon a status write that met a newer object is
// tried again.
const ConflictRetry = 100 * time.Millisecond

// UnseenJobDeadline is how long a created Job may stay unseen by the
// manager's cache before it is looked for at the API server.
const UnseenJobDeadline = time.Minute

// createdJob is a download Job created and not yet seen in the cache.
type createdJob struct {
	namespace, name string
	at              time.Time
}

// modelState is one model's state on one node, and the Warning its
// arrival brings (recorded once the state is written, so that a write that
// meets a newer object and is made again records it once).
type modelState struct {
	status  v1alpha1.ModelStatus
	detail  v1alpha1.LocalModelDetail
	warning *warning
}

// warning is an Event on a node's LocalModelNode.
type warning struct {
	reason, action, note string
}

// Reconcile brings one node's downloads in step with its list and its
// agents' reports.
func (d *Downloads) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lmn := &v1alpha1.LocalModelNode{}
	if err := d.Client.Get(ctx, req.NamespacedName, lmn); err != nil {
		// Gone: its Jobs go with it (it owns them).
		if apierrors.IsNotFound(err) {
			d.status.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cfg, err := d.Config.InForce(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	jobs := &batchv1.JobList{}
	if err := d.Client.List(ctx, jobs, client.MatchingLabels{modelcache.NodeLabel: lmn.Name}); err != nil {
		return ctrl.Result{}, err
	}
	if err := d.deleteUnlisted(ctx, lmn, jobs.Items); err != nil {
		return ctrl.Result{}, err
	}
	states := map[string]modelState{}
	byCopy := map[string]modelState{}
	waiting := false
	for _, e := range lmn.Spec.LocalModels {
		// One copy per group's disk and owner scope: the caches that share
		// it share its Jobs and its state.
		copyKey := e.NodeGroup + "/" + v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)
		if s, done := byCopy[copyKey]; done {
			s.warning = nil // said once, for the copy
			states[e.StatusKey()] = s
			continue
		}
		s, err := d.model(ctx, lmn, e, jobsOf(jobs.Items, e, lmn), cfg)
		if err != nil {
			return ctrl.Result{}, err
		}
		waiting = waiting || s.detail.Reason == ReasonJobNotSeen || d.isPending(lmn, e.StatusKey())
		states[e.StatusKey()], byCopy[copyKey] = s, s
	}
	inUse, err := d.inUse(ctx, lmn)
	if err != nil {
		return ctrl.Result{}, err
	}
	written, err := d.report(ctx, lmn, states, inUse)
	if written {
		for _, st := range states {
			if w := st.warning; w != nil {
				d.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, w.reason, w.action, "%s", w.note)
			}
		}
	}
	if err != nil {
		if apierrors.IsConflict(err) {
			// The agent wrote meanwhile, or the cache is behind: again,
			// soon, from what is there now.
			return ctrl.Result{RequeueAfter: ConflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if waiting {
		// A created Job the cache has not shown: look again after the
		// deadline, as nothing else may bring a reconcile.
		return ctrl.Result{RequeueAfter: UnseenJobDeadline}, nil
	}
	return ctrl.Result{}, nil
}

// jobsOf are the download Jobs of one entry, not being deleted, made for
// this very node list: the Jobs of an earlier object of the same name (a
// list deleted and made again, whose Jobs the garbage collector has not
// removed yet) are not its attempts.
func jobsOf(all []batchv1.Job, e v1alpha1.LocalModelInfo, lmn *v1alpha1.LocalModelNode) []batchv1.Job {
	var out []batchv1.Job
	for _, j := range all {
		if j.Labels[modelcache.ModelLabel] == e.ModelName && j.Labels[modelcache.ModelNamespaceLabel] == e.Namespace &&
			j.Labels[modelcache.GroupNameLabel] == e.NodeGroup && j.DeletionTimestamp == nil && metav1.IsControlledBy(&j, lmn) {
			out = append(out, j)
		}
	}
	return out
}

// deleteUnlisted deletes the Jobs of models no longer on the node's list.
func (d *Downloads) deleteUnlisted(ctx context.Context, lmn *v1alpha1.LocalModelNode, jobs []batchv1.Job) error {
	for i := range jobs {
		j := &jobs[i]
		listed := slices.ContainsFunc(lmn.Spec.LocalModels, func(e v1alpha1.LocalModelInfo) bool {
			return e.ModelName == j.Labels[modelcache.ModelLabel] && e.Namespace == j.Labels[modelcache.ModelNamespaceLabel] &&
				e.NodeGroup == j.Labels[modelcache.GroupNameLabel]
		})
		if listed || j.DeletionTimestamp != nil {
			continue
		}
		if err := d.Client.Delete(ctx, j, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete the download Job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	return nil
}

// model is one model's state on the node, from its Jobs and its agent's
// report, starting a download when the folder is empty and attempts are
// left. A report counts only once it is about the latest Job: until the
// agent has looked after that Job ended, the model waits for it.
func (d *Downloads) model(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, jobs []batchv1.Job, cfg *config.Config) (modelState, error) {
	prev := modelState{status: lmn.Status.ModelStatus[e.StatusKey()], detail: lmn.Status.Models[e.StatusKey()]}
	if st, wait, err := d.unseen(ctx, lmn, e, jobs); wait || err != nil {
		return st, err
	}
	latest := modelcache.Latest(jobs)
	detail := v1alpha1.LocalModelDetail{Attempts: int32(len(jobs)), Job: prev.detail.Job}
	if latest != nil {
		detail.Job = latest.Name
	}
	if latest != nil && !modelcache.JobFinished(latest) {
		detail.JobRunning = true
		return d.running(ctx, latest, detail), nil
	}
	rep, reported := lmn.Status.Copies[e.StatusKey()]
	switch {
	case !reported:
		detail.Reason, detail.Message = ReasonWaitingForAgent, fmt.Sprintf("waiting for the node agent of node group %s to report the model's folder", e.NodeGroup)
		return modelState{status: v1alpha1.ModelDownloadPending, detail: detail}, nil
	case rep.Job != detail.Job:
		detail.Reason, detail.Message = ReasonMeasuring, fmt.Sprintf("waiting for the node agent of node group %s to look at the folder after Job %s", e.NodeGroup, detail.Job)
		return modelState{status: v1alpha1.ModelDownloading, detail: detail}, nil
	}
	if latest == nil {
		// Its Jobs are gone (their TTL): the count of the last round stays.
		detail.Attempts = prev.detail.Attempts
	}
	switch rep.State {
	case v1alpha1.CopyPresent:
		detail.Bytes, detail.Digest = rep.Bytes, rep.Digest
		return modelState{status: v1alpha1.ModelDownloaded, detail: detail}, nil
	case v1alpha1.CopyMeasuring:
		detail.Reason, detail.Message = ReasonMeasuring, "the node agent is measuring the copy's size and digest"
		return modelState{status: v1alpha1.ModelDownloading, detail: detail}, nil
	case v1alpha1.CopyFailed:
		if rep.Reason != modelcache.ReasonModelTooLarge || e.ModelSize == nil || rep.Bytes > e.ModelSize.Value() {
			// The agent said why, with an Event; a larger modelSize tries
			// an oversized model again.
			detail.Bytes, detail.Digest, detail.Reason, detail.Message = rep.Bytes, rep.Digest, rep.Reason, rep.Message
			return modelState{status: v1alpha1.ModelDownloadError, detail: detail}, nil
		}
	}
	return d.retry(ctx, lmn, e, latest, detail, prev, cfg)
}

// running is the state of a model whose download Job runs: Downloading
// once its pod runs, else pending, with why its pod does not start (it
// cannot be scheduled, its image not pulled).
func (d *Downloads) running(ctx context.Context, job *batchv1.Job, detail v1alpha1.LocalModelDetail) modelState {
	st := modelState{status: v1alpha1.ModelDownloadPending, detail: detail}
	if job.Status.Ready != nil && *job.Status.Ready > 0 {
		st.status = v1alpha1.ModelDownloading
		return st
	}
	pods := &corev1.PodList{}
	if err := d.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err == nil {
		st.detail.Reason, st.detail.Message = modelcache.WaitingReason(pods.Items)
	}
	if st.detail.Reason == "" && job.Status.Active > 0 {
		st.status = v1alpha1.ModelDownloading
	}
	return st
}

// retry starts the next download of a model whose folder is empty: after
// none, after one that failed (its reason kept), or after one that left
// nothing. Past localModel.maxDownloadAttempts Jobs it stops, with an
// Event; deleting the failed Jobs (by hand, or when their TTL ends)
// starts a new round.
func (d *Downloads) retry(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, latest *batchv1.Job, detail v1alpha1.LocalModelDetail, prev modelState, cfg *config.Config) (modelState, error) {
	if latest != nil {
		detail.Attempts = max(detail.Attempts, 1)
		if modelcache.JobSucceeded(latest) {
			detail.Reason, detail.Message = ReasonModelMissing, fmt.Sprintf("Job %s succeeded but left no files in the model's folder", latest.Name)
		} else {
			detail.Reason, detail.Message = modelcache.WhyFailed(ctx, d.Client, latest)
		}
	}
	if detail.Attempts >= cfg.LocalModel.MaxDownloadAttempts {
		st := modelState{status: v1alpha1.ModelDownloadError, detail: detail}
		if prev.status != v1alpha1.ModelDownloadError {
			st.warning = &warning{reason: "DownloadFailed", action: "Download",
				note: fmt.Sprintf("%s: %s after %d attempts: %s", e.StatusKey(), detail.Reason, detail.Attempts, detail.Message)}
		}
		return st, nil
	}
	job, err := d.launch(ctx, lmn, e, detail.Attempts+1, cfg)
	if err != nil {
		return modelState{}, err
	}
	d.Recorder.Eventf(lmn, job, corev1.EventTypeNormal, "Downloading", "Download", "%s from %s: Job %s/%s, attempt %d of %d",
		e.StatusKey(), e.SourceModelUri, job.Namespace, job.Name, detail.Attempts+1, cfg.LocalModel.MaxDownloadAttempts)
	d.remember(lmn, e.StatusKey(), job)
	detail.Attempts++
	detail.Job, detail.JobRunning = job.Name, true
	return modelState{status: v1alpha1.ModelDownloadPending, detail: detail}, nil
}

// report writes the manager's part of the node's status when it changed:
// the models' states and the folders in use; written says it did. The
// agents' part (copies, disks) is not in the patch.
func (d *Downloads) report(ctx context.Context, lmn *v1alpha1.LocalModelNode, states map[string]modelState, inUse []string) (written bool, err error) {
	var status map[string]v1alpha1.ModelStatus
	var models map[string]v1alpha1.LocalModelDetail
	for k, s := range states {
		if status == nil {
			status, models = map[string]v1alpha1.ModelStatus{}, map[string]v1alpha1.LocalModelDetail{}
		}
		status[k], models[k] = s.status, s.detail
	}
	next := *lmn.Status.DeepCopy()
	next.ModelStatus, next.Models, next.InUse = status, models, inUse
	written, err = d.status.Write(ctx, lmn, lmn.DeepCopy(), next)
	if err != nil {
		return false, fmt.Errorf("write the models' states on node %s: %w", lmn.Name, err)
	}
	return written, nil
}

func (d *Downloads) now() time.Time {
	if d.Clock != nil {
		return d.Clock()
	}
	return time.Now()
}
