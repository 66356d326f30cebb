package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestEverySampleGoesReady applies every file of config/samples and waits
// for each InferenceService and LLMInferenceService to be Ready; no Knative
// controller or Gateway implementation runs here, so the test writes the
// Knative Services' status as Knative would, and the InferencePools' and
// HTTPRoutes' as a Gateway would.
func TestEverySampleGoesReady(t *testing.T) {
	ctx := context.Background()
	const ns = "samples"
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "config/samples/*.yaml"))
	require.NoError(t, err)
	// The KEDA sample needs KEDA's CRD; its operator is played below.
	kedaCRD, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(sb.Env.Config, envtest.CRDInstallOptions{Paths: kedaCRD})
	require.NoError(t, err)
	// The multi-node LLM sample's LeaderWorkerSets are played too.
	playCtx, stopPlaying := context.WithCancel(ctx)
	defer stopPlaying()
	go sb.PlayLeaderWorkerSets(playCtx, ns)
	// The model cache sample's node agents run here, their download Jobs
	// completed by kwok.
	go sb.PlayNodeAgents(playCtx, t.TempDir(), "serval-system")
	for _, f := range files {
		require.NoError(t, dev.ApplyFile(ctx, sb.Client, f, ns), f)
	}
	list := &v1beta1.InferenceServiceList{}
	require.NoError(t, sb.Client.List(ctx, list, client.InNamespace(ns)))
	require.GreaterOrEqual(t, len(list.Items), 18, "one InferenceService per sample")
	for _, isvc := range list.Items {
		t.Run(isvc.Name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: isvc.Name}
			if strings.EqualFold(isvc.Annotations[v1beta1.DeploymentModeAnnotation], "Knative") {
				require.NoError(t, sb.PlayKnativeReady(ctx, ns, isvc.Name+"-predictor", 90*time.Second))
			}
			if isvc.Annotations[v1beta1.AutoscalerClassAnnotation] == "keda" {
				require.NoError(t, sb.PlayKEDAReady(ctx, ns, isvc.Name+"-predictor", 90*time.Second))
			}
			waitFor(t, isvc.Name+" to be Ready", func() bool {
				got := &v1beta1.InferenceService{}
				return sb.Client.Get(ctx, key, got) == nil && meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionReady)
			})
		})
	}
	llms := &v1alpha2.LLMInferenceServiceList{}
	require.NoError(t, sb.Client.List(ctx, llms, client.InNamespace(ns)))
	require.GreaterOrEqual(t, len(llms.Items), 2, "one LLMInferenceService per LLM sample")
	for _, svc := range llms.Items {
		t.Run(svc.Name, func(t *testing.T) {
			if r := svc.Spec.Router; r != nil {
				pool, route := "", ""
				if r.Scheduler != nil {
					pool = svc.Name + "-inference-pool"
				}
				if r.Route != nil {
					route = svc.Name + "-kserve-route"
				}
				gateway := types.NamespacedName{Namespace: "serval-system", Name: "serval-ingress-gateway"}
				require.NoError(t, sb.PlayInferenceGateway(ctx, gateway, ns, pool, route, 90*time.Second))
			}
			key := types.NamespacedName{Namespace: ns, Name: svc.Name}
			waitFor(t, svc.Name+" to be Ready", func() bool {
				got := &v1alpha2.LLMInferenceService{}
				return sb.Client.Get(ctx, key, got) == nil && meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha2.ConditionReady)
			})
		})
	}
}
