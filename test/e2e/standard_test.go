package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestStandardCreateReadyDelete: on a real cluster an InferenceService goes
// Ready through the controller-manager and kwok, and deleting it
// garbage-collects its children.
func TestStandardCreateReadyDelete(t *testing.T) {
	ctx := context.Background()
	c := sb.Client
	isvc := &v1beta1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: "iris", Namespace: "default"},
		Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{
			ComponentExtensionSpec: v1beta1.ComponentExtensionSpec{MinReplicas: ptr.To[int32](2)},
			Model: &v1beta1.ModelSpec{ModelFormat: v1beta1.ModelFormat{Name: "sklearn"},
				PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://models/iris")}},
		}},
	}
	start := time.Now()
	require.NoError(t, c.Create(ctx, isvc))
	key := types.NamespacedName{Namespace: "default", Name: "iris"}
	waitFor(t, "the InferenceService to be Ready", func() bool {
		got := &v1beta1.InferenceService{}
		return c.Get(ctx, key, got) == nil && meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionReady)
	})
	t.Logf("create to Ready on the sandbox: %s", time.Since(start).Round(time.Millisecond))

	pods := &corev1.PodList{}
	require.NoError(t, c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{v1beta1.InferenceServiceLabel: "iris"}))
	// Ready needs one available replica of the two; the other may still be
	// starting.
	require.True(t, slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }),
		"a pod of the InferenceService runs")

	require.NoError(t, c.Delete(ctx, isvc))
	child := types.NamespacedName{Namespace: "default", Name: "iris-predictor"}
	waitFor(t, "the children to be garbage-collected", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, child, &appsv1.Deployment{})) &&
			apierrors.IsNotFound(c.Get(ctx, child, &corev1.Service{})) &&
			apierrors.IsNotFound(c.Get(ctx, child, &autoscalingv2.HorizontalPodAutoscaler{}))
	})
}
