package modelcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/storage"
)

// TestJobGolden renders download Jobs: a cluster cache's with its
// ServiceAccount's credentials, and a namespace cache's with a
// storage-config key, in its own namespace.
func TestJobGolden(t *testing.T) {
	si := config.Default().StorageInitializer
	init := storage.Initializer{Image: si.Image, Resources: si.Resources}
	owner := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1", UID: "lmn-uid"}}
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hf-token"}, Data: map[string][]byte{"HF_TOKEN": []byte("x")}}
	cases := []struct {
		name string
		in   JobInputs
	}{
		{"job-cluster-cache", JobInputs{Entry: v1alpha1.LocalModelInfo{SourceModelUri: "hf://meta-llama/Meta-Llama-3-8B", ModelName: "llama3-8b", NodeGroup: "gpu",
			ServiceAccountName: "hf-reader"}, Node: "gpu-node-1", Owner: owner, Namespace: "serval-localmodel-jobs", Initializer: init,
			Credentials: storage.Credentials{ServiceAccountSecrets: []corev1.Secret{secret}}, FSGroup: 1000, TTL: 3600}},
		{"job-namespace-cache", JobInputs{Entry: v1alpha1.LocalModelInfo{SourceModelUri: "s3://models/bert", ModelName: "bert", Namespace: "team-b", NodeGroup: "gpu",
			Storage: &v1alpha1.LocalModelStorageSpec{StorageKey: ptr.To("minio")}}, Node: "gpu-node-1", Owner: owner, Namespace: "team-b", Initializer: init,
			Credentials: storage.Credentials{StorageConfigSecret: storage.DefaultStorageConfigSecret, StorageKey: "minio", StorageSpec: true}, TTL: 600}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := Job(tc.in)
			require.NoError(t, err)
			data, err := yaml.Marshal(job)
			require.NoError(t, err)
			golden.Check(t, tc.name, data)
		})
	}
	_, err := Job(JobInputs{Entry: v1alpha1.LocalModelInfo{SourceModelUri: "pvc://claim/model", ModelName: "x", NodeGroup: "gpu"}, Node: "n", Initializer: init})
	require.ErrorContains(t, err, "not downloaded by the storage initializer")
}

func TestWaitingReason(t *testing.T) {
	pod := func(st corev1.PodStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "dl"}, Status: st}
	}
	cases := []struct {
		name            string
		pods            []corev1.Pod
		reason, message string
	}{
		{"unschedulable", []corev1.Pod{pod(corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/3 nodes are available: 1 node(s) had untolerated taint"}}})},
			"Unschedulable", "pod dl: 0/3 nodes are available: 1 node(s) had untolerated taint"},
		{"image", []corev1.Pod{pod(corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "download", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "back-off pulling image"}}}}})},
			"ImagePullBackOff", "pod dl: container download: back-off pulling image"},
		{"on its way", []corev1.Pod{pod(corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "download", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}})}, "", ""},
		{"no pod yet", nil, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := WaitingReason(tc.pods)
			require.Equal(t, tc.reason, reason)
			require.Equal(t, tc.message, message)
		})
	}
}

// TestLatest: the latest Job is the highest attempt, whatever the order
// the cache lists them in and though all were made within one second (the
// resolution of a creation time); without attempt numbers, the latest
// creation, then the name.
func TestLatest(t *testing.T) {
	second := metav1.NewTime(time.Unix(100, 0))
	job := func(name, attempt string, created metav1.Time) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created}}
		if attempt != "" {
			j.Annotations = map[string]string{AttemptAnnotation: attempt}
		}
		return j
	}
	a, b, c := job("zz", "1", second), job("aa", "3", second), job("mm", "2", second)
	for _, order := range [][]batchv1.Job{{a, b, c}, {c, b, a}, {b, a, c}} {
		require.Equal(t, "aa", Latest(order).Name)
	}
	old, newer := job("x", "", second), job("y", "", metav1.NewTime(second.Add(time.Second)))
	require.Equal(t, "y", Latest([]batchv1.Job{newer, old}).Name)
	require.Equal(t, "y", Latest([]batchv1.Job{job("x", "", second), job("y", "", second)}).Name)
	require.Nil(t, Latest(nil))
}
