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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/localmodel/children"
	"github.com/serval-dev/serval/pkg/storage"
)

// The agent's rights (ClusterRole serval-node-agent, config/rbac/node-agent):
// its node's list and report; the download Jobs, in the Jobs' namespace and
// in the namespaces of namespace caches; the credentials they use; the
// failed pods' messages; serval-config and the storage containers.
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=serving.serval.dev,resources=localmodelnodes/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=serving.serval.dev,resources=clusterstoragecontainers,verbs=get;list
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods;serviceaccounts;secrets,verbs=get;list
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Agent keeps one node's copies for one node group.
type Agent struct {
	// Client reads the node's LocalModelNode and its Jobs from the agent's
	// cache, and writes; Reader reads Secrets and ServiceAccounts uncached.
	Client   client.Client
	Reader   client.Reader
	Recorder events.EventRecorder
	Config   *config.Store
	// Node and Group are the node and the group the agent serves; Disk the
	// group's disk on the node.
	Node, Group string
	Disk        Disk

	credentials *credentials.Memo
	// created are the Jobs created and not yet seen in the cache, by
	// status key: a reconcile before the cache shows a new Job must not
	// create a second.
	mu      sync.Mutex
	created map[string]createdJob
	// unwantedSince is when each folder no entry wants was first seen so.
	unwantedSince map[string]time.Time
	// Clock, when set, is the time (tests); else time.Now.
	Clock func() time.Time

	hashOnce sync.Once
	hasher   *hasher
	// measures brings a reconcile when a measure ends.
	measures chan event.GenericEvent
}

// Reconcile brings the node's copies in step with its LocalModelNode.
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
			// copies stay, and so do their Jobs.
			log.FromContext(ctx).Info("The node's LocalModelNode is not there: deleting nothing", "node", a.Node)
			return ctrl.Result{RequeueAfter: cfg.LocalModel.ResyncPeriod}, nil
		}
		return ctrl.Result{}, err
	}
	if err := a.Disk.Ensure(); err != nil {
		return ctrl.Result{}, fmt.Errorf("the models folder on %s: %w", a.Disk.Root, err)
	}
	entries := a.entries(lmn)
	if err := a.removeUnwanted(ctx, entries, cfg); err != nil {
		return ctrl.Result{}, err
	}
	states := map[string]modelState{}
	byKey := map[string]modelState{}
	for _, e := range entries {
		key := v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)
		if s, done := byKey[key]; done {
			// Another cache of the same URI and owner scope: one copy,
			// one state.
			states[e.StatusKey()] = s
			continue
		}
		s, err := a.sync(ctx, lmn, e, cfg)
		if err != nil {
			return ctrl.Result{}, err
		}
		states[e.StatusKey()], byKey[key] = s, s
	}
	if err := a.report(ctx, lmn, entries, states); err != nil {
		return ctrl.Result{}, err
	}
	// The Jobs' changes bring a reconcile; the resync checks the folders.
	return ctrl.Result{RequeueAfter: cfg.LocalModel.ResyncPeriod}, nil
}

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

// modelState is one model's state on the node.
type modelState struct {
	status v1alpha1.ModelStatus
	detail v1alpha1.LocalModelDetail
}

// sync brings one model towards its copy: it is there (Downloaded), or its
// latest Job runs, or a new attempt starts, or the attempts are spent
// (ModelDownloadError, with the last Job's reason). The attempts are the
// Jobs that exist: deleting the failed Jobs (by hand, or when their TTL
// ends) starts a new round.
func (a *Agent) sync(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, cfg *config.Config) (modelState, error) {
	key := v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)
	prev := modelState{status: lmn.Status.ModelStatus[e.StatusKey()], detail: lmn.Status.Models[e.StatusKey()]}
	has, err := a.Disk.Has(key)
	if err != nil {
		return modelState{}, err
	}
	if has && prev.detail.Digest != "" && (prev.status == v1alpha1.ModelDownloaded || prev.detail.Reason == ReasonCopyChanged) {
		return a.verified(lmn, e, key, prev, cfg), nil
	}
	if prev.detail.Reason == ReasonModelTooLarge && declared(e) >= 0 && prev.detail.Bytes > declared(e) {
		// It did not fit, and the cache still declares less: downloading
		// it again would only fill the disk again. A larger modelSize
		// tries again.
		return prev, nil
	}
	jobs, err := a.jobs(ctx, e, cfg)
	if err != nil {
		return modelState{}, err
	}
	if created, ok := a.pending(e.StatusKey()); ok {
		switch {
		case slices.ContainsFunc(jobs, func(j batchv1.Job) bool { return j.Name == created.name }):
			a.forget(e.StatusKey())
		case a.now().Sub(created.at) < UnseenJobDeadline:
			// Created by an earlier reconcile; the cache has not shown it
			// yet, and a second must not be made meanwhile.
			return modelState{status: v1alpha1.ModelDownloadPending, detail: v1alpha1.LocalModelDetail{Attempts: int32(len(jobs) + 1)}}, nil
		default:
			lost, err := a.lostJob(ctx, lmn, e, created)
			if err != nil || !lost {
				return modelState{status: v1alpha1.ModelDownloadPending, detail: v1alpha1.LocalModelDetail{Attempts: int32(len(jobs) + 1),
					Reason: ReasonJobNotSeen, Message: fmt.Sprintf("Job %s/%s was created %s ago and the agent's cache has not shown it yet",
						created.namespace, created.name, a.now().Sub(created.at).Round(time.Second))}}, err
			}
		}
	}
	attempts := int32(len(jobs))
	var latest *batchv1.Job
	for i := range jobs {
		if latest == nil || jobs[i].CreationTimestamp.After(latest.CreationTimestamp.Time) {
			latest = &jobs[i]
		}
	}
	switch {
	case latest != nil && jobSucceeded(latest) && has:
		done := latest.CreationTimestamp.Time
		if t := latest.Status.CompletionTime; t != nil {
			done = t.Time
		}
		return a.measured(lmn, e, key, attempts, prev, cfg, done)
	case has && latest == nil && prev.status == v1alpha1.ModelDownloaded:
		// Downloaded before, its Jobs gone: measure it once.
		return a.measured(lmn, e, key, prev.detail.Attempts, prev, cfg, time.Time{})
	case latest != nil && !jobFinished(latest):
		st := modelState{status: v1alpha1.ModelDownloadPending, detail: v1alpha1.LocalModelDetail{Attempts: attempts}}
		if ptrValue(latest.Status.Ready) > 0 {
			st.status = v1alpha1.ModelDownloading
			return st, nil
		}
		// Not running yet: say why, when its pod cannot be scheduled or
		// its image not pulled.
		pods := &corev1.PodList{}
		if err := a.Reader.List(ctx, pods, client.InNamespace(latest.Namespace), client.MatchingLabels{"job-name": latest.Name}); err == nil {
			st.detail.Reason, st.detail.Message = waitingReason(pods.Items)
		}
		if st.detail.Reason == "" && latest.Status.Active > 0 {
			st.status = v1alpha1.ModelDownloading
		}
		return st, nil
	}
	// No copy and no Job running: the latest failed, or succeeded without
	// leaving the model on this disk, or there is none.
	failure := v1alpha1.LocalModelDetail{Attempts: attempts}
	if latest != nil {
		failure.Reason, failure.Message = a.whyFailed(ctx, latest)
	}
	if attempts >= cfg.LocalModel.MaxDownloadAttempts {
		if prev.status != v1alpha1.ModelDownloadError {
			a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, "DownloadFailed", "Download", "%s: %s after %d attempts: %s",
				e.StatusKey(), failure.Reason, attempts, failure.Message)
		}
		return modelState{status: v1alpha1.ModelDownloadError, detail: failure}, nil
	}
	job, err := a.launch(ctx, lmn, e, cfg)
	if err != nil {
		return modelState{}, err
	}
	a.Recorder.Eventf(lmn, job, corev1.EventTypeNormal, "Downloading", "Download", "%s from %s: Job %s/%s, attempt %d of %d",
		e.StatusKey(), e.SourceModelUri, job.Namespace, job.Name, attempts+1, cfg.LocalModel.MaxDownloadAttempts)
	a.remember(e.StatusKey(), job)
	failure.Attempts++
	st := modelState{status: v1alpha1.ModelDownloadPending, detail: failure}
	return st, nil
}

// measured is the state of a copy on the disk: Downloaded with its size
// and digest, or, when it holds a file that is not regular (a FIFO, a
// device), a failed copy naming the file, with an Event: the agent never
// reads such a file, and a model has none. A copy larger than its cache
// declares fails and is deleted (localModel.oversizedCopy: fail), so that
// one tenant's cache cannot fill a disk others share; or is kept with a
// Warning (warn).
//
// The measure runs off the reconcile goroutine (see hasher): until it ends,
// the copy is Downloading, "measuring the copy"; a measure that started
// before downloaded (a copy since replaced) does not count.
func (a *Agent) measured(lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, key string, attempts int32, prev modelState, cfg *config.Config, downloaded time.Time) (modelState, error) {
	m, ok := a.hasherFor(cfg).Result(key, downloaded)
	if !ok {
		return modelState{status: v1alpha1.ModelDownloading, detail: v1alpha1.LocalModelDetail{Attempts: attempts,
			Reason: "Measuring", Message: "measuring the copy's size and digest"}}, nil
	}
	size, digest, err := m.size, m.digest, m.err
	var irregular *IrregularFileError
	if errors.As(err, &irregular) {
		msg := fmt.Sprintf("the copy of %s in models/%s: %v", e.SourceModelUri, key, err)
		if prev.detail.Reason != ReasonIrregularFile {
			a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, ReasonIrregularFile, "Measure", "%s: %s", e.StatusKey(), msg)
		}
		return modelState{status: v1alpha1.ModelDownloadError, detail: v1alpha1.LocalModelDetail{Attempts: attempts,
			Reason: ReasonIrregularFile, Message: msg}}, nil
	}
	if err != nil {
		return modelState{}, fmt.Errorf("measure the model %s: %w", e.SourceModelUri, err)
	}
	if limit := declared(e); limit >= 0 && size > limit {
		msg := fmt.Sprintf("the copy of %s is %d bytes, and the cache declares modelSize %s (%d bytes), which its node group's storageLimit counts: "+
			"raise modelSize, or cache a smaller model", e.SourceModelUri, size, e.ModelSize.String(), limit)
		if !cfg.LocalModel.FailOversizedCopies {
			if prev.status != v1alpha1.ModelDownloaded {
				a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, ReasonModelTooLarge, "Measure", "%s: %s (kept: localModel.oversizedCopy is warn)", e.StatusKey(), msg)
			}
			return modelState{status: v1alpha1.ModelDownloaded, detail: v1alpha1.LocalModelDetail{Bytes: size, Digest: digest, Attempts: attempts}}, nil
		}
		if err := a.Disk.Remove(key); err != nil {
			return modelState{}, fmt.Errorf("delete the oversized copy models/%s: %w", key, err)
		}
		a.hasherFor(cfg).Forget(key)
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, ReasonModelTooLarge, "Measure", "%s: %s; the copy was deleted", e.StatusKey(), msg)
		return modelState{status: v1alpha1.ModelDownloadError, detail: v1alpha1.LocalModelDetail{Bytes: size, Attempts: attempts,
			Reason: ReasonModelTooLarge, Message: msg}}, nil
	}
	return modelState{status: v1alpha1.ModelDownloaded, detail: v1alpha1.LocalModelDetail{Bytes: size, Digest: digest, Attempts: attempts}}, nil
}

// verified is the state of a copy measured before: while its files are as
// they were (the same digest, re-measured every localModel.verifyPeriod off
// the reconcile goroutine), Downloaded; once they differ (written by hand,
// by a pod that mounted it writable, by a fault), ModelDownloadError,
// reason CopyChanged, naming both digests, with an Event, until the files
// are as they were again or the folder is deleted (the agent then
// downloads it again). A changed copy is never deleted by the agent: pods
// may be reading it.
func (a *Agent) verified(lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, key string, prev modelState, cfg *config.Config) modelState {
	m, ok := a.hasherFor(cfg).Result(key, a.now().Add(-cfg.LocalModel.VerifyPeriod))
	if !ok {
		return prev
	}
	var irregular *IrregularFileError
	switch {
	case errors.As(m.err, &irregular):
		msg := fmt.Sprintf("the copy of %s in models/%s: %v", e.SourceModelUri, key, m.err)
		if prev.detail.Reason != ReasonIrregularFile {
			a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, ReasonIrregularFile, "Measure", "%s: %s", e.StatusKey(), msg)
		}
		detail := prev.detail
		detail.Reason, detail.Message = ReasonIrregularFile, msg
		return modelState{status: v1alpha1.ModelDownloadError, detail: detail}
	case m.err != nil:
		// Not a fact about the copy (a deadline, a read error): the state
		// stays, and the next period measures again.
		log.Log.Info("Could not verify a copy", "folder", key, "error", m.err.Error())
		return prev
	case m.digest == prev.detail.Digest:
		detail := prev.detail
		detail.Reason, detail.Message = "", ""
		return modelState{status: v1alpha1.ModelDownloaded, detail: detail}
	}
	msg := fmt.Sprintf("the files of the copy of %s in models/%s changed since it was downloaded: its digest was %s and is %s (%d bytes); "+
		"delete the folder on the node to download it again", e.SourceModelUri, key, prev.detail.Digest, m.digest, m.size)
	if prev.detail.Reason != ReasonCopyChanged {
		a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, ReasonCopyChanged, "Verify", "%s: %s", e.StatusKey(), msg)
	}
	detail := prev.detail
	detail.Reason, detail.Message = ReasonCopyChanged, msg
	return modelState{status: v1alpha1.ModelDownloadError, detail: detail}
}

// ReasonCopyChanged is a copy's failure when its files no longer have the
// digest they were downloaded with.
const ReasonCopyChanged = "CopyChanged"

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

// ReasonModelTooLarge is a copy's failure when it is larger than its
// cache's declared modelSize.
const ReasonModelTooLarge = "ModelTooLarge"

// declared is the bytes an entry's cache declares, -1 when it declares
// none (an entry written by an older manager).
func declared(e v1alpha1.LocalModelInfo) int64 {
	if e.ModelSize == nil {
		return -1
	}
	return e.ModelSize.Value()
}

// ReasonIrregularFile is a copy's failure when its folder holds a file that
// is neither regular, a folder nor a link.
const ReasonIrregularFile = "IrregularFile"

// whyFailed is a finished Job's failure: its Failed condition, and the
// message its container ended with (the storage initializer's error), or
// why a Job that succeeded left no model.
func (a *Agent) whyFailed(ctx context.Context, job *batchv1.Job) (reason, message string) {
	if jobSucceeded(job) {
		return "ModelMissing", fmt.Sprintf("Job %s succeeded but left no files in the model's folder", job.Name)
	}
	return WhyFailed(ctx, a.Reader, job)
}

// WhyFailed is a failed Job's reason and message: its Failed condition,
// and the message its container ended with (the storage initializer's
// error).
func WhyFailed(ctx context.Context, r client.Reader, job *batchv1.Job) (reason, message string) {
	reason = "DownloadFailed"
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			reason, message = c.Reason, c.Message
		}
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err == nil {
		for _, p := range pods.Items {
			for _, cs := range p.Status.ContainerStatuses {
				if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
					msg := strings.TrimSpace(t.Message)
					if len(msg) > 512 {
						msg = "..." + msg[len(msg)-512:]
					}
					message = fmt.Sprintf("Job %s: container %s exited with %d (%s)", job.Name, cs.Name, t.ExitCode, t.Reason)
					if msg != "" {
						message += ": " + msg
					}
				}
			}
		}
	}
	if message == "" {
		message = "Job " + job.Name + " failed"
	}
	return reason, message
}

// jobs are the download Jobs of one model on this node.
func (a *Agent) jobs(ctx context.Context, e v1alpha1.LocalModelInfo, cfg *config.Config) ([]batchv1.Job, error) {
	sel := client.MatchingLabels{ModelLabel: e.ModelName, NodeLabel: a.Node}
	list := &batchv1.JobList{}
	if err := a.Client.List(ctx, list, client.InNamespace(JobNamespace(e, cfg.LocalModel.JobNamespace)), sel); err != nil {
		return nil, err
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if j.Labels[ModelNamespaceLabel] == e.Namespace && j.DeletionTimestamp == nil {
			out = append(out, j)
		}
	}
	return out, nil
}

// launch creates a download Job for an entry.
func (a *Agent) launch(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, cfg *config.Config) (*batchv1.Job, error) {
	ns := JobNamespace(e, cfg.LocalModel.JobNamespace)
	creds, err := DownloadCredentials(ctx, a.credentials, a.Reader, e, ns)
	if err != nil {
		return nil, err
	}
	sc, err := MatchingStorageContainer(ctx, a.Reader, e.SourceModelUri)
	if err != nil {
		return nil, err
	}
	si := cfg.StorageInitializer
	job, err := Job(JobInputs{Entry: e, Node: a.Node, Owner: lmn, Namespace: ns, Container: sc,
		Initializer: storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()},
		Credentials: creds, FSGroup: cfg.LocalModel.FSGroup, TTL: cfg.LocalModel.JobTTLSecondsAfterFinished})
	if err != nil {
		return nil, fmt.Errorf("the download Job of %s: %w", e.StatusKey(), err)
	}
	if err := a.Client.Create(ctx, job); err != nil {
		return nil, fmt.Errorf("create the download Job of %s: %w", e.StatusKey(), err)
	}
	log.FromContext(ctx).Info("Downloading a model", "model", e.StatusKey(), "uri", e.SourceModelUri, "job", job.Name)
	return job, nil
}

// DownloadCredentials are an entry's download credentials: its
// storage-config key, else its ServiceAccount's Secrets (read through
// memo), in the Job's namespace.
func DownloadCredentials(ctx context.Context, memo *credentials.Memo, r client.Reader, e v1alpha1.LocalModelInfo, ns string) (storage.Credentials, error) {
	if e.Storage != nil {
		c := storage.Credentials{StorageConfigSecret: storage.DefaultStorageConfigSecret, StorageSpec: true}
		if e.Storage.StorageKey != nil {
			c.StorageKey = *e.Storage.StorageKey
		}
		if e.Storage.Parameters != nil {
			c.Parameters = *e.Storage.Parameters
		}
		return c, nil
	}
	sa := e.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	secrets, err := memo.ServiceAccountSecrets(ctx, r, types.NamespacedName{Namespace: ns, Name: sa})
	if err != nil {
		return storage.Credentials{}, err
	}
	return storage.Credentials{ServiceAccountSecrets: secrets}, nil
}

// MatchingStorageContainer is the container of the ClusterStorageContainer for
// download Jobs that supports uri; nil for none.
func MatchingStorageContainer(ctx context.Context, r client.Reader, uri string) (*corev1.Container, error) {
	list := &v1alpha1.ClusterStorageContainerList{}
	if err := r.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		sc := &list.Items[i]
		if sc.IsDisabled() || sc.Spec.WorkloadType != v1alpha1.LocalModelDownloadJob {
			continue
		}
		if ok, _ := sc.Spec.Supports(uri); ok {
			return &sc.Spec.Container, nil
		}
	}
	return nil, nil
}

// removeUnwanted deletes the Jobs of models no longer on the node's list,
// then the folders no entry of the group wants.
func (a *Agent) removeUnwanted(ctx context.Context, entries []v1alpha1.LocalModelInfo, cfg *config.Config) error {
	wantKeys := map[string]bool{}
	wantModels := map[string]bool{}
	for _, e := range entries {
		wantKeys[v1alpha1.CopyKey(e.Namespace, e.SourceModelUri)] = true
		wantModels[e.StatusKey()] = true
	}
	jobs := &batchv1.JobList{}
	if err := a.Client.List(ctx, jobs, client.MatchingLabels{NodeLabel: a.Node}); err != nil {
		return err
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.Labels[children.GroupNameLabel] != a.Group || j.DeletionTimestamp != nil {
			continue
		}
		if wantModels[v1alpha1.StatusKey(j.Labels[ModelNamespaceLabel], j.Labels[ModelLabel])] {
			continue
		}
		if err := a.Client.Delete(ctx, j, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	keys, err := a.Disk.Keys()
	if err != nil {
		return err
	}
	return a.removeAfterGrace(ctx, keys, wantKeys, cfg.LocalModel.DeleteGracePeriod)
}

// removeAfterGrace deletes the folders of keys that no entry wants and
// have not been wanted for the grace period, each with an Event naming it
// and its size; a folder wanted again is kept. The times live in memory:
// an agent that restarts waits a whole period again, never less.
func (a *Agent) removeAfterGrace(ctx context.Context, keys []string, want map[string]bool, grace time.Duration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.unwantedSince == nil {
		a.unwantedSince = map[string]time.Time{}
	}
	on := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: a.Node}}
	present := map[string]bool{}
	for _, k := range keys {
		present[k] = true
		if want[k] {
			delete(a.unwantedSince, k)
			continue
		}
		since, seen := a.unwantedSince[k]
		if !seen {
			a.unwantedSince[k] = a.now()
			a.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "DeletionScheduled", "Delete",
				"the folder models/%s of node group %s is no longer wanted by any cache: deleting it in %s unless one wants it again", k, a.Group, grace)
			continue
		}
		if a.now().Sub(since) < grace {
			continue
		}
		size, _ := a.Disk.Size(k)
		log.FromContext(ctx).Info("Deleting a model no cache keeps", "folder", k, "bytes", size)
		if err := a.Disk.Remove(k); err != nil {
			return fmt.Errorf("delete the model folder %s: %w", k, err)
		}
		if a.hasher != nil {
			a.hasher.Forget(k)
		}
		delete(a.unwantedSince, k)
		a.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "Deleted", "Delete",
			"deleted the folder models/%s of node group %s (%d bytes): no cache has wanted it for %s", k, a.Group, size, grace)
	}
	for k := range a.unwantedSince {
		if !present[k] {
			delete(a.unwantedSince, k) // gone by other means
		}
	}
	return nil
}

// now is the agent's clock.
func (a *Agent) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

// report writes the group's models' states and the disk's space: only the
// keys of its group, so the agents of two groups on one node do not undo
// each other's reports.
func (a *Agent) report(ctx context.Context, lmn *v1alpha1.LocalModelNode, entries []v1alpha1.LocalModelInfo, states map[string]modelState) error {
	next := lmn.Status.DeepCopy()
	if next.ModelStatus == nil {
		next.ModelStatus = map[string]v1alpha1.ModelStatus{}
	}
	if next.Models == nil {
		next.Models = map[string]v1alpha1.LocalModelDetail{}
	}
	mine := map[string]bool{}
	for _, e := range entries {
		mine[e.StatusKey()] = true
	}
	for k := range next.ModelStatus {
		if !mine[k] && !a.listedElsewhere(lmn, k) {
			delete(next.ModelStatus, k)
			delete(next.Models, k)
		}
	}
	for k, s := range states {
		next.ModelStatus[k], next.Models[k] = s.status, s.detail
	}
	if free, total, err := a.Disk.Space(); err == nil {
		if next.Disks == nil {
			next.Disks = map[string]v1alpha1.LocalModelDisk{}
		}
		next.Disks[a.Group] = v1alpha1.LocalModelDisk{Available: *roundedGi(free), Capacity: *roundedGi(total)}
	}
	// As read back: an empty map is not stored.
	if len(next.ModelStatus) == 0 {
		next.ModelStatus, next.Models = nil, nil
	}
	if reflect.DeepEqual(next, &lmn.Status) {
		return nil
	}
	patch := client.MergeFrom(lmn.DeepCopy())
	lmn.Status = *next
	return a.Client.Status().Patch(ctx, lmn, patch)
}

// listedElsewhere reports whether a status key belongs to an entry of
// another group (whose agent reports it).
func (a *Agent) listedElsewhere(lmn *v1alpha1.LocalModelNode, key string) bool {
	for _, e := range lmn.Spec.LocalModels {
		if e.StatusKey() == key && e.NodeGroup != a.Group {
			return true
		}
	}
	return false
}

// roundedGi rounds a byte count down to a tenth of a GiB, so the report
// does not change with every file written elsewhere on the disk.
func roundedGi(n int64) *resource.Quantity {
	const tenth = 1 << 30 / 10
	return resource.NewQuantity(n/tenth*tenth, resource.BinarySI)
}

func (a *Agent) pending(key string) (createdJob, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.created[key]
	return j, ok
}

// createdJob is a download Job the agent created and its cache has not
// shown yet.
type createdJob struct {
	namespace, name string
	at              time.Time
}

// ReasonJobNotSeen is a pending model's reason when the Job the agent
// created is still at the API server past UnseenJobDeadline but not in its
// cache.
const ReasonJobNotSeen = "JobNotSeen"

// UnseenJobDeadline is how long a Job the agent created may stay unseen
// by its cache before the agent looks for it at the API server.
const UnseenJobDeadline = time.Minute

// lostJob looks for a Job the cache has not shown past the deadline at the
// API server: still there, the cache lags, and the agent waits; gone
// (deleted before the cache saw it), it is forgotten, with an Event, and
// the next attempt may start.
func (a *Agent) lostJob(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, created createdJob) (bool, error) {
	err := a.Reader.Get(ctx, types.NamespacedName{Namespace: created.namespace, Name: created.name}, &batchv1.Job{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("look for the download Job %s/%s: %w", created.namespace, created.name, err)
	}
	a.forget(e.StatusKey())
	a.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, "JobLost", "Download", "%s: Job %s/%s, created %s ago, is gone before the agent saw it run; starting another",
		e.StatusKey(), created.namespace, created.name, a.now().Sub(created.at).Round(time.Second))
	return true, nil
}

func (a *Agent) forget(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.created, key)
}

func (a *Agent) remember(key string, job *batchv1.Job) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.created == nil {
		a.created = map[string]createdJob{}
	}
	a.created[key] = createdJob{namespace: job.Namespace, name: job.Name, at: a.now()}
}

func jobSucceeded(j *batchv1.Job) bool {
	return j.Status.Succeeded > 0 || hasCondition(j, batchv1.JobComplete)
}
func jobFinished(j *batchv1.Job) bool {
	return jobSucceeded(j) || j.Status.Failed > 0 || hasCondition(j, batchv1.JobFailed)
}

func hasCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// SetupWithManager registers the agent: its node's LocalModelNode (a
// change of its list), and the Jobs it made (their progress).
func (a *Agent) SetupWithManager(mgr ctrl.Manager) error {
	a.credentials = credentials.NewMemo()
	a.measures = make(chan event.GenericEvent, 1)
	return ctrl.NewControllerManagedBy(mgr).
		Named("serval-node-agent").
		For(&v1alpha1.LocalModelNode{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		WatchesRawSource(source.Channel(a.measures, &handler.EnqueueRequestForObject{})).
		Complete(a)
}

// waitingReason is why a download pod is not running: its scheduling
// failure, or its container's waiting reason (an image that cannot be
// pulled); "" when it is on its way.
func waitingReason(pods []corev1.Pod) (reason, message string) {
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
				return c.Reason, fmt.Sprintf("pod %s: %s", p.Name, c.Message)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				return w.Reason, fmt.Sprintf("pod %s: container %s: %s", p.Name, cs.Name, w.Message)
			}
		}
	}
	return "", ""
}
