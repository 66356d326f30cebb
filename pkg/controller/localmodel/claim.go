package localmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/modelcache"
	"github.com/serval-dev/serval/pkg/storage"
)

// The reasons of a cache on a claim.
const (
	ReasonClaimNotReady = "ClaimNotReady"
)

// DownloadJobName is the one download Job of a cache on a claim.
func DownloadJobName(cache string) string { return cache + "-download" }

// reconcileClaim keeps a namespace cache on a claim (pvcRef, KServe's
// shared-claim cache): the claim checked (ReadWriteMany, a filesystem, at
// least modelSize), one download Job into its models folder, and the
// cache's status from that Job. The Job retries failed pods up to
// localModel.maxDownloadAttempts in all; deleting a failed Job starts a
// new round.
func (r *Reconciler) reconcileClaim(ctx context.Context, c *v1alpha1.LocalModelNamespaceCache, cfg *config.Config) (ctrl.Result, error) {
	u, _, err := r.users(ctx, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := cacheStatus(nil, nil, u, c.Generation)
	st.ModelCopies = &v1alpha1.ModelCopies{Total: 1}
	setReady := func(ok bool, reason, message string) {
		st.Conditions[0].Status, st.Conditions[0].Reason, st.Conditions[0].Message = metav1.ConditionFalse, reason, message
		if ok {
			st.Conditions[0].Status = metav1.ConditionTrue
		}
	}
	if why, err := r.checkClaim(ctx, c); err != nil {
		return ctrl.Result{}, err
	} else if why != "" {
		setReady(false, ReasonClaimNotReady, why)
		return ctrl.Result{RequeueAfter: VolumeRetryInterval}, r.writeStatus(ctx, c, st)
	}
	job, err := r.downloadJob(ctx, c, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}
	producer := &jobProducer{job: job}
	out, err := r.pipeline.Run(ctx, pipeline.Request{Owner: pipeline.Owner{Object: c, Ref: *cacheobjects.CacheRef(c)},
		Producers: []pipeline.Producer{producer}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if f := out.FirstFailure(); f != nil {
		setReady(false, ReasonVolumeFailed, f.Message())
		return ctrl.Result{RequeueAfter: VolumeRetryInterval}, r.writeStatus(ctx, c, st)
	}
	switch live := producer.live; {
	case live == nil:
		setReady(false, ReasonDownloading, "waiting for the download Job "+DownloadJobName(c.Name))
	case live.Status.Succeeded > 0:
		st.ModelCopies.Available = 1
		setReady(true, ReasonDownloaded, "the claim "+c.Spec.PVCRef+" holds the model")
	case modelcache.JobFailed(live):
		st.ModelCopies.Failed = 1
		reason, message := modelcache.WhyFailed(ctx, r.APIReader, live)
		setReady(false, ReasonDownloadFailed, fmt.Sprintf("%s: %s (delete the Job to try again)", reason, message))
	default:
		setReady(false, ReasonDownloading, "the download Job "+live.Name+" is running")
	}
	return ctrl.Result{}, r.writeStatus(ctx, c, st)
}

// checkClaim says why a cache's claim cannot hold the model, or "": it
// must exist, be shared by the pods of every node (ReadWriteMany), be a
// filesystem and request at least modelSize (KServe's rules). Claims are
// read uncached: the manager caches only its own.
func (r *Reconciler) checkClaim(ctx context.Context, c *v1alpha1.LocalModelNamespaceCache) (string, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.Spec.PVCRef}, pvc)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("the claim %s does not exist in namespace %s", c.Spec.PVCRef, c.Namespace), nil
	case err != nil:
		return "", err
	case !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany):
		return fmt.Sprintf("the claim %s is not ReadWriteMany: the pods of every node mount it", pvc.Name), nil
	case pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == corev1.PersistentVolumeBlock:
		return fmt.Sprintf("the claim %s is a block device, not a filesystem", pvc.Name), nil
	}
	if req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || req.Cmp(c.Spec.ModelSize) < 0 {
		return fmt.Sprintf("the claim %s requests %s, less than the modelSize %s", pvc.Name, req.String(), c.Spec.ModelSize.String()), nil
	}
	return "", nil
}

// downloadJob is the one download Job of a cache on a claim, created once
// and then kept as it is (a Job's pod template is immutable).
func (r *Reconciler) downloadJob(ctx context.Context, c *v1alpha1.LocalModelNamespaceCache, cfg *config.Config) (apply.Object, error) {
	entry := entryOf(c, "")
	creds, err := DownloadCredentials(ctx, r.credentials, r.APIReader, entry, c.Namespace)
	if err != nil {
		return apply.Object{}, err
	}
	sc, err := MatchingStorageContainer(ctx, r.APIReader, entry.SourceModelUri)
	if err != nil {
		return apply.Object{}, err
	}
	si := cfg.StorageInitializer
	job, err := modelcache.Job(modelcache.JobInputs{Entry: entry, Namespace: c.Namespace, Name: DownloadJobName(c.Name), Claim: c.Spec.PVCRef,
		Initializer: storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()},
		Container:   sc, Credentials: creds, FSGroup: cfg.LocalModel.FSGroup, TTL: 0, Retries: cfg.LocalModel.MaxDownloadAttempts - 1,
		Labels: map[string]string{v1beta1.ComponentLabel: modelcache.Component, modelcache.NamespaceCacheLabel: c.Name}})
	if err != nil {
		return apply.Object{}, err
	}
	// Kept until the cache goes: its success is the cache's readiness.
	job.Spec.TTLSecondsAfterFinished = nil
	job.OwnerReferences = nil
	ac := batchv1ac.Job(job.Name, job.Namespace)
	data, err := json.Marshal(job)
	if err != nil {
		return apply.Object{}, err
	}
	if err := json.Unmarshal(data, ac); err != nil {
		return apply.Object{}, err
	}
	ac.Status = nil
	ac.WithOwnerReferences(cacheobjects.CacheRef(c).Reference())
	return apply.Object{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Key: types.NamespacedName{Namespace: job.Namespace, Name: job.Name},
		Spec: ac, Frozen: true}, nil
}

// jobProducer is a claim cache's download Job; it reads the Job back (nil
// when the cache has not seen it yet).
type jobProducer struct {
	job  apply.Object
	live *batchv1.Job
}

func (p *jobProducer) Component() v1beta1.ComponentType { return "" }
func (p *jobProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	return []apply.Object{p.job}, nil, nil
}
func (p *jobProducer) Absent(*kinds.Kind) *pipeline.Failure { return nil }

func (p *jobProducer) Observe(ctx context.Context, r client.Reader) error {
	live := &batchv1.Job{}
	err := r.Get(ctx, p.job.Key, live)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	p.live = live
	return nil
}
