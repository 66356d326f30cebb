package modelcache

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
)

// claimVolume is the download Job's volume of the claim it writes to.
const claimVolume = "models"

// JobInputs are what one download Job is made of.
type JobInputs struct {
	Entry v1alpha1.LocalModelInfo
	// Node is the node the Job runs on; Owner its LocalModelNode.
	Node  string
	Owner *v1alpha1.LocalModelNode
	// Namespace is where the Job runs: the Jobs' namespace for a cluster
	// cache, the cache's own for a namespace cache.
	Namespace string
	// Initializer is the storage initializer; Container, when set, a
	// ClusterStorageContainer's container merged over it.
	Initializer storage.Initializer
	Container   *corev1.Container
	Credentials storage.Credentials
	// FSGroup (0: none) and TTL, of the finished Job.
	FSGroup int64
	TTL     int32
	// Name, when set, is the Job's name (else one is generated); Claim,
	// when set, the claim it writes to, in the model's folder (else the
	// cache's download claim on the entry's node group); Retries the pod
	// failures it retries itself (else none: the manager counts attempts,
	// one Job each). Labels are
	// added to the Job's. A Job with no Node runs on any node: the one
	// download of a cache on a claim.
	Name, Claim string
	Retries     int32
	Labels      map[string]string
	// Attempt, when set, is the Job's attempt number (AttemptAnnotation).
	Attempt int32
}

// JobNamespace is where an entry's download Jobs run.
func JobNamespace(e v1alpha1.LocalModelInfo, jobNamespace string) string {
	if e.Namespace != "" {
		return e.Namespace
	}
	return jobNamespace
}

// Job is one download attempt: the storage initializer on the node,
// writing the model into the cache's claim, in the folder of the URI's
// storage key. One pod, no retries within the Job: the manager counts the
// attempts, one Job each.
func Job(in JobInputs) (*batchv1.Job, error) {
	e := in.Entry
	loc, err := storage.ParseWith(e.SourceModelUri, in.Container != nil)
	if err != nil {
		return nil, err
	}
	plan := storage.MakePlan(loc, in.Initializer, in.Credentials)
	if in.Container != nil {
		if err := plan.UseContainer(*in.Container); err != nil {
			return nil, err
		}
	}
	if plan.InitContainer == nil {
		return nil, fmt.Errorf("%s is not downloaded by the storage initializer", e.SourceModelUri)
	}
	c := *plan.InitContainer
	c.Name = DownloadContainer
	c.Args = []string{e.SourceModelUri, storage.MountPath}
	claim, subPath := in.Claim, ModelPath(e.Namespace, e.SourceModelUri)
	switch {
	case claim != "":
	case e.Namespace != "":
		// A namespace cache's download claim binds its own folder only.
		claim, subPath = NamespaceDownloadClaimName(e.ModelName, e.NodeGroup), ""
	default:
		claim = ClaimName(e.ModelName, e.NodeGroup)
	}
	var mounts []corev1.VolumeMount
	for _, m := range c.VolumeMounts {
		if m.Name == storage.VolumeName {
			m = corev1.VolumeMount{Name: claimVolume, MountPath: storage.MountPath, SubPath: subPath}
		}
		mounts = append(mounts, m)
	}
	c.VolumeMounts = mounts
	volumes := []corev1.Volume{{Name: claimVolume, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
		ClaimName: claim}}}}
	for _, v := range plan.Volumes {
		if v.Name != storage.VolumeName {
			volumes = append(volumes, v)
		}
	}
	// The component label brings the Job into the manager's cache.
	labels := map[string]string{ModelLabel: e.ModelName, v1beta1.ComponentLabel: Component}
	if in.Node != "" {
		labels[NodeLabel], labels[GroupNameLabel] = in.Node, e.NodeGroup
	}
	if e.Namespace != "" {
		labels[ModelNamespaceLabel] = e.Namespace
	}
	for k, v := range in.Labels {
		labels[k] = v
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{c},
		Volumes:       volumes,
	}
	if in.Node != "" {
		// On this node, whatever its taints: the model is for its disk.
		pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{in.Node}}}}}}}}
		pod.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	if e.ServiceAccountName != "" {
		pod.ServiceAccountName = e.ServiceAccountName
	}
	if in.FSGroup != 0 {
		pod.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To(in.FSGroup)}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: e.ModelName + "-" + in.Node + "-", Name: in.Name, Namespace: in.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To(in.Retries),
			TTLSecondsAfterFinished: ptr.To(in.TTL),
			Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
	if in.Name != "" {
		job.GenerateName = ""
	}
	if in.Attempt > 0 {
		job.Annotations = map[string]string{AttemptAnnotation: strconv.Itoa(int(in.Attempt))}
	}
	if in.Owner != nil {
		job.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "LocalModelNode",
			Name: in.Owner.Name, UID: in.Owner.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	return job, nil
}
