package localmodel

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/storage"
)

// launch creates the attempt-th download Job of an entry, on its node.
func (d *Downloads) launch(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, attempt int32, cfg *config.Config) (*batchv1.Job, error) {
	ns := modelcache.JobNamespace(e, cfg.LocalModel.JobNamespace)
	creds, err := DownloadCredentials(ctx, d.credentials, d.APIReader, e, ns)
	if err != nil {
		return nil, err
	}
	sc, err := MatchingStorageContainer(ctx, d.APIReader, e.SourceModelUri)
	if err != nil {
		return nil, err
	}
	si := cfg.StorageInitializer
	job, err := modelcache.Job(modelcache.JobInputs{Entry: e, Node: lmn.Name, Owner: lmn, Namespace: ns, Container: sc,
		Initializer: storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()},
		Credentials: creds, FSGroup: cfg.LocalModel.FSGroup, TTL: cfg.LocalModel.JobTTLSecondsAfterFinished, Attempt: attempt})
	if err != nil {
		return nil, fmt.Errorf("the download Job of %s: %w", e.StatusKey(), err)
	}
	if err := d.Client.Create(ctx, job); err != nil {
		return nil, fmt.Errorf("create the download Job of %s on node %s: %w", e.StatusKey(), lmn.Name, err)
	}
	log.FromContext(ctx).Info("Downloading a model", "node", lmn.Name, "model", e.StatusKey(), "uri", e.SourceModelUri, "job", job.Name)
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

// unseen is the state of a model whose Job was created and is not in the
// cache yet (wait is true then): pending, with no second Job made; past
// UnseenJobDeadline it is looked for at the API server, and a Job gone
// before the cache showed it is forgotten, with an Event, so the next
// attempt may start.
func (d *Downloads) unseen(ctx context.Context, lmn *v1alpha1.LocalModelNode, e v1alpha1.LocalModelInfo, jobs []batchv1.Job) (st modelState, wait bool, err error) {
	created, ok := d.pending(lmn, e.StatusKey())
	if !ok {
		return modelState{}, false, nil
	}
	if slices.ContainsFunc(jobs, func(j batchv1.Job) bool { return j.Name == created.name }) {
		d.forget(lmn, e.StatusKey())
		return modelState{}, false, nil
	}
	st = modelState{status: v1alpha1.ModelDownloadPending, detail: v1alpha1.LocalModelDetail{Attempts: int32(len(jobs) + 1), Job: created.name, JobRunning: true}}
	age := d.now().Sub(created.at)
	if age < UnseenJobDeadline {
		return st, true, nil
	}
	err = d.APIReader.Get(ctx, types.NamespacedName{Namespace: created.namespace, Name: created.name}, &batchv1.Job{})
	switch {
	case err == nil:
		st.detail.Reason = ReasonJobNotSeen
		st.detail.Message = fmt.Sprintf("Job %s/%s was created %s ago and the manager's cache has not shown it yet", created.namespace, created.name, age.Round(time.Second))
		return st, true, nil
	case !apierrors.IsNotFound(err):
		return modelState{}, true, fmt.Errorf("look for the download Job %s/%s: %w", created.namespace, created.name, err)
	}
	d.forget(lmn, e.StatusKey())
	d.Recorder.Eventf(lmn, nil, corev1.EventTypeWarning, "JobLost", "Download", "%s: Job %s/%s, created %s ago, is gone before the manager saw it run; starting another",
		e.StatusKey(), created.namespace, created.name, age.Round(time.Second))
	return modelState{}, false, nil
}

// createdKey names a model of one node list (by its UID: a list made
// again under the same name starts afresh).
func createdKey(lmn *v1alpha1.LocalModelNode, statusKey string) string {
	return string(lmn.UID) + "\x00" + statusKey
}

func (d *Downloads) pending(lmn *v1alpha1.LocalModelNode, statusKey string) (createdJob, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j, ok := d.created[createdKey(lmn, statusKey)]
	return j, ok
}

func (d *Downloads) isPending(lmn *v1alpha1.LocalModelNode, statusKey string) bool {
	_, ok := d.pending(lmn, statusKey)
	return ok
}

func (d *Downloads) forget(lmn *v1alpha1.LocalModelNode, statusKey string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.created, createdKey(lmn, statusKey))
}

func (d *Downloads) remember(lmn *v1alpha1.LocalModelNode, statusKey string, job *batchv1.Job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.created == nil {
		d.created = map[string]createdJob{}
	}
	d.created[createdKey(lmn, statusKey)] = createdJob{namespace: job.Namespace, name: job.Name, at: d.now()}
}
