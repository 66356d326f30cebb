package e2e

import (
	"context"
	"fmt"
	"os"
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

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/operator"
	"github.com/serval-dev/serval/pkg/sandbox"
)

var sb *sandbox.Sandbox

func TestMain(m *testing.M) {
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	sb, err = sandbox.Start(ctx, sandbox.Options{
		CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: operator.Scheme(), Progress: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := make(chan struct{})
	code := func() int {
		if err := sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serval-system"}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mgr, err := operator.New(ctx, sb.Env.Config, operator.Options{Namespace: "serval-system", MetricsAddr: "0", HealthProbeAddr: "0"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() {
			defer close(done)
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
		return m.Run()
	}()
	cancel()
	<-done
	if err := sb.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; component logs in %s", what, sb.LogDir())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestStandardCreateReadyDelete: on a real cluster an InferenceService goes
// Ready through the controller-manager and kwok, and deleting it
// garbage-collects its children.
func TestStandardCreateReadyDelete(t *testing.T) {
	ctx := context.Background()
	c := sb.Client
	csr := &v1alpha1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "e2e-sklearn"}, Spec: v1alpha1.ServingRuntimeSpec{
		SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "sklearn", AutoSelect: ptr.To(true), Priority: ptr.To[int32](1)}},
		ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1},
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
			Name: "kserve-container", Image: "kserve/sklearnserver:v0.15.2", Args: []string{"--model_name={{.Name}}"}}}},
	}}
	require.NoError(t, c.Create(ctx, csr))
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
	require.NotEmpty(t, pods.Items)
	require.Equal(t, corev1.PodRunning, pods.Items[0].Status.Phase)

	require.NoError(t, c.Delete(ctx, isvc))
	child := types.NamespacedName{Namespace: "default", Name: "iris-predictor"}
	waitFor(t, "the children to be garbage-collected", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, child, &appsv1.Deployment{})) &&
			apierrors.IsNotFound(c.Get(ctx, child, &corev1.Service{})) &&
			apierrors.IsNotFound(c.Get(ctx, child, &autoscalingv2.HorizontalPodAutoscaler{}))
	})
}
