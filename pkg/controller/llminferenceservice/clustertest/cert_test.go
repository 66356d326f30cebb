package clustertest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// certificateOf reads the serving certificate's Secret and its DNS names.
func certificateOf(t *testing.T, ns, name string) (*corev1.Secret, []string) {
	t.Helper()
	s := &corev1.Secret{}
	if !exists(s, ns, name+"-kserve-self-signed-certs") {
		return nil, nil
	}
	block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
	require.NotNil(t, block, "tls.crt is PEM")
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return s, cert.DNSNames
}

// touch makes the service reconcile without changing its spec, and waits
// for that reconcile.
func touch(t *testing.T, ns, name, value string) {
	t.Helper()
	reconciled := reconciles.Of("llminferenceservice", ns, name)
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, name)
		s.Annotations = map[string]string{"touched": value}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "a reconcile", func() bool { return reconciles.Of("llminferenceservice", ns, name) > reconciled })
}

// TestServingCertificateIsMadeOnceAndKept: the certificate is made with the
// workload, kept while it fits (no write when the service reconciles), made
// again when the picker's names join it, and recreated as it was when
// someone deletes its Secret.
func TestServingCertificateIsMadeOnceAndKept(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createService(t, ns, "llama", "  model: {uri: hf://facebook/opt-125m}\n")
	var secret *corev1.Secret
	var names []string
	eventually(t, "the certificate", func() bool { secret, names = certificateOf(t, ns, "llama"); return secret != nil })
	assert.Equal(t, corev1.SecretTypeTLS, secret.Type)
	assert.Equal(t, secret.Data[corev1.TLSCertKey], secret.Data["ca.crt"], "self-signed: the certificate is its own CA")
	ref := metav1.GetControllerOf(secret)
	require.NotNil(t, ref)
	assert.Equal(t, get(t, ns, "llama").UID, ref.UID, "deleted with its service")
	assert.ElementsMatch(t, []string{"localhost", "llama-kserve-workload-svc." + ns + ".svc",
		"llama-kserve-workload-svc." + ns + ".svc.cluster.local"}, names)

	makeAvailable(t, ns, "llama-kserve")
	eventually(t, "Ready", func() bool { return condition(t, ns, "llama", "Ready") == "True/Ready" })
	touch(t, ns, "llama", "1")
	kept, _ := certificateOf(t, ns, "llama")
	assert.Equal(t, secret.ResourceVersion, kept.ResourceVersion, "a reconcile keeps the certificate")

	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "llama")
		s.Spec.Router = &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}
		return k8s.Update(ctx, s)
	}))
	eventually(t, "the picker's names", func() bool {
		_, names = certificateOf(t, ns, "llama")
		return strings.Contains(strings.Join(names, ","), "llama-epp-service."+ns+".svc")
	})
	grown, _ := certificateOf(t, ns, "llama")

	require.NoError(t, k8s.Delete(ctx, grown))
	touch(t, ns, "llama", "2")
	eventually(t, "the certificate again", func() bool { s, _ := certificateOf(t, ns, "llama"); return s != nil })
	again, _ := certificateOf(t, ns, "llama")
	assert.Equal(t, grown.Data, again.Data, "recreated with the same key and certificate")
}

// TestForeignSecretIsNotTakenOver: a Secret of the certificate's name that
// Serval does not control is left as it is, and the workload's condition
// says so.
func TestForeignSecretIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama-kserve-self-signed-certs"},
		Data: map[string][]byte{"token": []byte("users-own")}}
	require.NoError(t, k8s.Create(ctx, mine))
	createService(t, ns, "llama", "  model: {uri: hf://facebook/opt-125m}\n")
	eventually(t, "the conflict reported", func() bool {
		return strings.HasPrefix(condition(t, ns, "llama", "MainWorkloadReady"), "False/")
	})
	assert.Contains(t, message(t, ns, "llama", "MainWorkloadReady"), "Secret "+ns+"/llama-kserve-self-signed-certs exists and is not controlled by this")
	left := &corev1.Secret{}
	require.True(t, exists(left, ns, "llama-kserve-self-signed-certs"))
	assert.Equal(t, mine.Data, left.Data, "the user's Secret is untouched")
	assert.Empty(t, left.OwnerReferences)
}

// TestPendingPodChangesNothing: a model pod that stays Pending without an
// IP makes no write: the certificate covers names, not pod addresses
// (KServe adds the empty IP of such a pod to its certificate, and makes a
// new key at every reconcile).
func TestPendingPodChangesNothing(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createService(t, ns, "llama", "  model: {uri: hf://facebook/opt-125m}\n")
	eventually(t, "the status", func() bool { return condition(t, ns, "llama", "Ready") != "" })
	secret, _ := certificateOf(t, ns, "llama")
	require.NotNil(t, secret)
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	before, reconciled := len(writes.Into(ns)), reconciles.Of("llminferenceservice", ns, "llama")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "llama-kserve-pending", Labels: map[string]string{
		"serving.serval.dev/llminferenceservice": "llama", "serving.serval.dev/component": "workload",
		"app.kubernetes.io/name": "llama", "app.kubernetes.io/part-of": "llminferenceservice"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "vllm"}}}}
	require.NoError(t, k8s.Create(ctx, pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}}}
	require.NoError(t, k8s.Status().Update(ctx, pod))
	touch(t, ns, "llama", "pending pod")
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	assert.Greater(t, reconciles.Of("llminferenceservice", ns, "llama"), reconciled)
	after, _ := certificateOf(t, ns, "llama")
	assert.Equal(t, secret.ResourceVersion, after.ResourceVersion, "the certificate is kept")
	var more []string
	for _, w := range writes.Into(ns)[before:] {
		if !strings.Contains(w, "/llminferenceservices/llama/status") && !strings.Contains(w, "/pods") && !strings.HasSuffix(w, "/llminferenceservices/llama") {
			more = append(more, w)
		}
	}
	assert.Empty(t, more, "no child written for a Pending pod without an IP")
}
