package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
)

// TestStorageConfigSecretCreatedLate: a model given as storage: {key,
// path} waits for the storage-config Secret, saying so, and recovers as
// soon as the Secret is created, with no change to the InferenceService.
func TestStorageConfigSecretCreatedLate(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "late-sklearn", "sklearn-late")
	createISVC(t, ns, "late", "sklearn-late", withPredictor(func(p *v1beta1.PredictorSpec) {
		p.Model.StorageURI = nil
		p.Model.Storage = &v1beta1.StorageSpec{StorageKey: ptr.To("minio"), Path: ptr.To("models/iris")}
	}))
	eventually(t, "the missing Secret reported", func() bool {
		c := cond(getISVC(t, ns, "late"), v1beta1.ConditionPredictorReady)
		return c != nil && strings.Contains(c.Message, "reads the Secret storage-config, which does not exist in the namespace; create it")
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "storage-config", Namespace: ns},
		StringData: map[string]string{"minio": `{"type": "s3", "bucket": "team"}`}}
	require.NoError(t, k8s.Create(context.Background(), secret))
	eventually(t, "the Deployment, the model read from the Secret's bucket", func() bool {
		return exists(&appsv1.Deployment{}, ns, "late-predictor") && storageURIOf(t, ns, "late-predictor") == "s3://team/models/iris"
	})
	quiesce(t, ns)
}

// TestNamedStorageSecretCreatedLate: a storage Secret of another name
// (the storageSecretName annotation) is not watched; it is looked for
// again every SecretRecheckInterval, so the service recovers all the same.
func TestNamedStorageSecretCreatedLate(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "late-named-sklearn", "sklearn-late-named")
	createISVC(t, ns, "named", "sklearn-late-named", withAnnotation(v1beta1.StorageSecretNameAnnotation, "team-storage"),
		withPredictor(func(p *v1beta1.PredictorSpec) {
			p.Model.StorageURI = nil
			p.Model.Storage = &v1beta1.StorageSpec{StorageKey: ptr.To("minio"), Path: ptr.To("models/iris")}
		}))
	eventually(t, "the missing Secret reported", func() bool {
		c := cond(getISVC(t, ns, "named"), v1beta1.ConditionPredictorReady)
		return c != nil && strings.Contains(c.Message, "reads the Secret team-storage, which does not exist")
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "team-storage", Namespace: ns},
		StringData: map[string]string{"minio": `{"type": "s3", "bucket": "team"}`}}
	require.NoError(t, k8s.Create(context.Background(), secret))
	deadline := time.Now().Add(inferenceservice.SecretRecheckInterval + 30*time.Second)
	for !exists(&appsv1.Deployment{}, ns, "named-predictor") {
		require.True(t, time.Now().Before(deadline), "the service did not recover")
		time.Sleep(200 * time.Millisecond)
	}
}
