package clustertest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
)

// routeWithGatewayAPI switches the routes to Gateway API for the test.
// (This file runs after TestGatewayAPI, which wants the CRDs absent when it
// starts; see firstRoute.)
func routeWithGatewayAPI(t *testing.T) {
	t.Helper()
	paths, err := testenv.UpstreamCRDPathsOf(testenv.GatewayAPI)
	require.NoError(t, err)
	installCRDsForTest(t, paths)
	setConfig(t, map[string]string{"ingress.enableGatewayApi": "true", "ingress.gateway": "gateways/public"})
}

// firstRoute waits for the route's first backends. The manager's watch of
// HTTPRoutes may be backing off after an earlier test removed their CRD
// (client-go's reflector retries at most every 30 s), so it waits longer
// than eventually.
func firstRoute(t *testing.T, ns, name string, want []string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !slices.Equal(backends(t, ns, name), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s's backends %v; they are %v", name, want, backends(t, ns, name))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// backends are the backends of the route's last rule (the main one), as
// "service=weight"; the CRD defaults a weight to 1.
func backends(t *testing.T, ns, name string) []string {
	t.Helper()
	route := &gatewayv1.HTTPRoute{}
	if !exists(route, ns, name) || len(route.Spec.Rules) == 0 {
		return nil
	}
	var out []string
	for _, b := range route.Spec.Rules[len(route.Spec.Rules)-1].BackendRefs {
		w := "-"
		if b.Weight != nil {
			w = strconv.Itoa(int(*b.Weight))
		}
		out = append(out, string(b.Name)+"="+w)
	}
	return out
}

func canaryOf(name, uri string, percent int32) v1beta1.CanarySpec {
	return v1beta1.CanarySpec{TrafficPercent: percent, Predictor: v1beta1.PredictorSpec{Name: name, Model: &v1beta1.ModelSpec{
		ModelFormat: v1beta1.ModelFormat{Name: "sklearn-canary"}, PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To(uri)}}}}
}

// TestCanaries: spec.canary runs each canary as its own Deployment with
// fixed replicas; a ready canary takes its share on the routes and lowers
// the stable predictor's minimum; promotion by name keeps the canary's
// Deployment and pods; removing an entry removes its canary.
func TestCanaries(t *testing.T) {
	ns := newNamespace(t)
	routeWithGatewayAPI(t)
	createClusterRuntime(t, "canary-sklearn", "sklearn-canary")
	createISVC(t, ns, "cny", "sklearn-canary", withPredictor(func(p *v1beta1.PredictorSpec) { p.MinReplicas = ptr.To[int32](4) }),
		func(i *v1beta1.InferenceService) {
			i.Spec.Canary = []v1beta1.CanarySpec{canaryOf("v2", "gs://models/cny-v2", 25)}
		})
	eventually(t, "both Deployments", func() bool {
		return exists(&appsv1.Deployment{}, ns, "cny-predictor") && exists(&appsv1.Deployment{}, ns, "cny-v2-predictor")
	})
	canary, err := getDeployment(ns, "cny-v2-predictor")
	require.NoError(t, err)
	assert.Equal(t, int32(1), *canary.Spec.Replicas, "ceil(4 × 25%), fixed")
	assert.Equal(t, "v2-predictor", canary.Spec.Selector.MatchLabels[v1beta1.ComponentLabel])
	assert.False(t, exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "cny-v2-predictor"), "a canary is not autoscaled")
	firstRoute(t, ns, "cny", []string{"cny-predictor=1"}) // no traffic to a canary that is not ready

	makeAvailable(t, ns, "cny-predictor")
	eventually(t, "CanaryPredictorReady False", func() bool {
		return hasCondition(getISVC(t, ns, "cny"), v1beta1.ConditionCanaryPredictorReady, metav1.ConditionFalse, v1beta1.ReasonCanariesNotReady)
	})
	isvc := getISVC(t, ns, "cny")
	require.Len(t, isvc.Status.CanaryStatuses, 1)
	assert.Equal(t, v1beta1.CanaryStatus{Name: "v2", TrafficPercent: 25, ModelStatus: isvc.Status.CanaryStatuses[0].ModelStatus}, isvc.Status.CanaryStatuses[0])

	makeAvailable(t, ns, "cny-v2-predictor")
	eventually(t, "the canary's share on both routes", func() bool {
		want := []string{"cny-predictor=75", "cny-v2-predictor=25"}
		return slices.Equal(backends(t, ns, "cny"), want) && slices.Equal(backends(t, ns, "cny-predictor"), want)
	})
	eventually(t, "AllCanariesReady", func() bool {
		i := getISVC(t, ns, "cny")
		return hasCondition(i, v1beta1.ConditionCanaryPredictorReady, metav1.ConditionTrue, v1beta1.ReasonAllCanariesReady) &&
			len(i.Status.CanaryStatuses) == 1 && i.Status.CanaryStatuses[0].Ready
	})
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	eventually(t, "the stable minimum lowered by the ready canary's replica", func() bool {
		return exists(hpa, ns, "cny-predictor") && ptr.Deref(hpa.Spec.MinReplicas, 0) == 3
	})

	// Promote: the stable predictor takes the canary's name and model.
	before, err := getDeployment(ns, "cny-v2-predictor")
	require.NoError(t, err)
	updateISVC(t, ns, "cny", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.Name = "v2"
		i.Spec.Predictor.Model.StorageURI = ptr.To("gs://models/cny-v2")
		i.Spec.Canary = nil
	})
	eventually(t, "the old stable Deployment removed", func() bool { return !exists(&appsv1.Deployment{}, ns, "cny-predictor") })
	eventually(t, "the route to the promoted Deployment alone", func() bool {
		return slices.Equal(backends(t, ns, "cny"), []string{"cny-v2-predictor=1"})
	})
	after, err := getDeployment(ns, "cny-v2-predictor")
	require.NoError(t, err)
	assert.Equal(t, before.UID, after.UID, "the same Deployment")
	assert.True(t, equality.Semantic.DeepEqual(before.Spec.Template, after.Spec.Template), "the same pod template: no pod restarts")
	eventually(t, "the canary status gone, the predictor ready", func() bool {
		i := getISVC(t, ns, "cny")
		return i.Status.CanaryStatuses == nil && cond(i, v1beta1.ConditionCanaryPredictorReady) == nil &&
			hasCondition(i, v1beta1.ConditionPredictorReady, metav1.ConditionTrue, "")
	})

	// A new canary, then removed: its Deployment goes.
	updateISVC(t, ns, "cny", func(i *v1beta1.InferenceService) {
		i.Spec.Canary = []v1beta1.CanarySpec{canaryOf("v3", "gs://models/cny-v3", 10)}
	})
	eventually(t, "the v3 canary", func() bool { return exists(&appsv1.Deployment{}, ns, "cny-v3-predictor") })
	updateISVC(t, ns, "cny", func(i *v1beta1.InferenceService) { i.Spec.Canary = nil })
	eventually(t, "the v3 canary removed", func() bool { return !exists(&appsv1.Deployment{}, ns, "cny-v3-predictor") })
	quiesce(t, ns)
	noReconcileStorm(t, ns, "cny", 2*time.Second, 1)
}

// TestCanaryNeedsAWeightingRouter: the Kubernetes Ingress cannot split
// traffic, so a canary is refused there, naming the routers that can.
func TestCanaryNeedsAWeightingRouter(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "canary-ingress-sklearn", "sklearn-canary-ingress")
	createISVC(t, ns, "ing", "sklearn-canary-ingress", withPredictor(func(p *v1beta1.PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) }))
	eventually(t, "CanaryNotRoutable", func() bool {
		i := getISVC(t, ns, "ing")
		return hasCondition(i, v1beta1.ConditionIngressReady, metav1.ConditionFalse, v1beta1.ReasonCanaryNotRoutable) &&
			hasCondition(i, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonCanaryNotRoutable)
	})
	assert.Contains(t, cond(getISVC(t, ns, "ing"), v1beta1.ConditionIngressReady).Message, "ingress.enableGatewayApi: true")
}

// storageURIOf is the model URI a predictor Deployment downloads: the
// storage initializer's first argument.
func storageURIOf(t *testing.T, ns, name string) string {
	t.Helper()
	d, err := getDeployment(ns, name)
	require.NoError(t, err)
	for _, c := range d.Spec.Template.Spec.InitContainers {
		if len(c.Args) > 0 {
			return c.Args[0]
		}
	}
	return ""
}

// TestCanaryTrafficPercentInStandardMode: with canaryTrafficPercent, a
// change runs as {isvc}-predictor-canary beside the revision last rolled
// out, which keeps running as it was; 0 rolls back, removing the field
// promotes the latest revision and removes the canary.
func TestCanaryTrafficPercentInStandardMode(t *testing.T) {
	ns := newNamespace(t)
	routeWithGatewayAPI(t)
	createClusterRuntime(t, "revision-sklearn", "sklearn-revision")
	createISVC(t, ns, "rev", "sklearn-revision", withPredictor(func(p *v1beta1.PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](20) }))
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "rev-predictor") })
	firstRoute(t, ns, "rev", []string{"rev-predictor=1"})
	makeAvailable(t, ns, "rev-predictor")
	var first string
	eventually(t, "the revision rolled out", func() bool {
		first = getISVC(t, ns, "rev").Status.Components[v1beta1.PredictorComponent].LatestRolledoutRevision
		return first != ""
	})
	assert.False(t, exists(&appsv1.Deployment{}, ns, "rev-predictor-canary"), "nothing to split before a change")

	updateISVC(t, ns, "rev", func(i *v1beta1.InferenceService) { i.Spec.Predictor.Model.StorageURI = ptr.To("gs://models/rev-2") })
	eventually(t, "the latest revision beside the last one", func() bool { return exists(&appsv1.Deployment{}, ns, "rev-predictor-canary") })
	assert.Equal(t, "gs://models/rev-2", storageURIOf(t, ns, "rev-predictor-canary"))
	assert.Equal(t, "gs://models/rev", storageURIOf(t, ns, "rev-predictor"), "the last revision keeps running as it was")
	assert.Equal(t, []string{"rev-predictor=1"}, backends(t, ns, "rev"), "no share before the latest revision is ready")

	makeAvailable(t, ns, "rev-predictor-canary")
	eventually(t, "the split on the routes", func() bool {
		return slices.Equal(backends(t, ns, "rev"), []string{"rev-predictor=80", "rev-predictor-canary=20"})
	})
	eventually(t, "the split in status", func() bool {
		cs := getISVC(t, ns, "rev").Status.Components[v1beta1.PredictorComponent]
		return cs.LatestRolledoutRevision == first && cs.LatestCreatedRevision != first && len(cs.Traffic) == 2 &&
			ptr.Deref(cs.Traffic[0].Percent, 0) == 80 && cs.Traffic[0].RevisionName == first && ptr.Deref(cs.Traffic[1].Percent, 0) == 20
	})

	updateISVC(t, ns, "rev", func(i *v1beta1.InferenceService) { i.Spec.Predictor.CanaryTrafficPercent = ptr.To[int64](0) })
	eventually(t, "rolled back: the latest revision removed", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "rev-predictor-canary") && slices.Equal(backends(t, ns, "rev"), []string{"rev-predictor=1"})
	})
	assert.Equal(t, "gs://models/rev", storageURIOf(t, ns, "rev-predictor"))

	updateISVC(t, ns, "rev", func(i *v1beta1.InferenceService) { i.Spec.Predictor.CanaryTrafficPercent = nil })
	eventually(t, "promoted: the predictor runs the latest revision", func() bool {
		return storageURIOf(t, ns, "rev-predictor") == "gs://models/rev-2"
	})
	makeAvailable(t, ns, "rev-predictor")
	eventually(t, "the latest revision rolled out", func() bool {
		cs := getISVC(t, ns, "rev").Status.Components[v1beta1.PredictorComponent]
		return cs.LatestRolledoutRevision != "" && cs.LatestRolledoutRevision != first
	})
	assert.False(t, exists(&appsv1.Deployment{}, ns, "rev-predictor-canary"))
	quiesce(t, ns)
	noReconcileStorm(t, ns, "rev", 2*time.Second, 1)
}

// TestCanaryWithItsOwnRuntime: a canary whose model is of another format
// gets its own runtime; one whose format no runtime serves is named.
func TestCanaryWithItsOwnRuntime(t *testing.T) {
	ns := newNamespace(t)
	routeWithGatewayAPI(t)
	createClusterRuntime(t, "canary-stable-sklearn", "sklearn-stable")
	createClusterRuntime(t, "canary-new-xgb", "xgboost-canary")
	createISVC(t, ns, "own", "sklearn-stable", func(i *v1beta1.InferenceService) {
		c := canaryOf("v2", "gs://models/own-v2", 10)
		c.Predictor.Model.ModelFormat.Name = "xgboost-canary"
		i.Spec.Canary = []v1beta1.CanarySpec{c}
	})
	image := func(name string) string {
		d, err := getDeployment(ns, name)
		if err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
			return ""
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}
	eventually(t, "each on its runtime", func() bool {
		return image("own-predictor") == "example.com/sklearn-stable-server:1" && image("own-v2-predictor") == "example.com/xgboost-canary-server:1"
	})

	updateISVC(t, ns, "own", func(i *v1beta1.InferenceService) {
		i.Spec.Canary[0].Predictor.Model.ModelFormat.Name = "nobody-serves-this"
	})
	eventually(t, "the canary's missing runtime named", func() bool {
		c := cond(getISVC(t, ns, "own"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.HasPrefix(c.Message, `canary "v2": `)
	})
}

// TestStopDuringASplit: stopping an InferenceService while
// canaryTrafficPercent splits its traffic keeps the revision last rolled
// out (its Deployment scaled to zero, not deleted) and the split; resuming
// brings both back as they were, so that canaryTrafficPercent: 0 still
// rolls back.
func TestStopDuringASplit(t *testing.T) {
	ns := newNamespace(t)
	routeWithGatewayAPI(t)
	createClusterRuntime(t, "park-sklearn", "sklearn-park")
	createISVC(t, ns, "park", "sklearn-park", withPredictor(func(p *v1beta1.PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) }))
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "park-predictor") })
	makeAvailable(t, ns, "park-predictor")
	var first string
	eventually(t, "the revision rolled out", func() bool {
		first = getISVC(t, ns, "park").Status.Components[v1beta1.PredictorComponent].LatestRolledoutRevision
		return first != ""
	})
	updateISVC(t, ns, "park", func(i *v1beta1.InferenceService) { i.Spec.Predictor.Model.StorageURI = ptr.To("gs://models/park-2") })
	eventually(t, "the latest revision beside it", func() bool { return exists(&appsv1.Deployment{}, ns, "park-predictor-canary") })
	makeAvailable(t, ns, "park-predictor-canary")
	eventually(t, "the split", func() bool {
		return slices.Equal(backends(t, ns, "park"), []string{"park-predictor=90", "park-predictor-canary=10"})
	})

	// Replicas as an autoscaler left them, which the resume brings back.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		running := &appsv1.Deployment{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "park-predictor"}, running); err != nil {
			return err
		}
		running.Spec.Replicas = ptr.To[int32](3)
		return k8s.Update(context.Background(), running)
	}))

	updateISVC(t, ns, "park", func(i *v1beta1.InferenceService) { i.Annotations = map[string]string{v1beta1.StopAnnotation: "true"} })
	eventually(t, "stopped: the latest revision removed, the last one parked at zero", func() bool {
		d := &appsv1.Deployment{}
		return !exists(&appsv1.Deployment{}, ns, "park-predictor-canary") && exists(d, ns, "park-predictor") &&
			ptr.Deref(d.Spec.Replicas, 1) == 0 && d.Annotations[apply.ParkedReplicasAnnotation] == "3"
	})
	assert.Equal(t, "gs://models/park", storageURIOf(t, ns, "park-predictor"), "the parked Deployment is the revision last rolled out")
	// The status follows the children: written by the same reconcile, after.
	eventually(t, "the status says stopped", func() bool {
		return hasCondition(getISVC(t, ns, "park"), v1beta1.ConditionStopped, metav1.ConditionTrue, v1beta1.ReasonStopped)
	})
	stopped := getISVC(t, ns, "park")
	assert.Equal(t, first, stopped.Status.Components[v1beta1.PredictorComponent].LatestRolledoutRevision, "the revision is remembered")

	updateISVC(t, ns, "park", func(i *v1beta1.InferenceService) { delete(i.Annotations, v1beta1.StopAnnotation) })
	eventually(t, "resumed: both revisions back", func() bool {
		d := &appsv1.Deployment{}
		return exists(d, ns, "park-predictor") && ptr.Deref(d.Spec.Replicas, 0) == 3 && d.Annotations[apply.ParkedReplicasAnnotation] == "" &&
			exists(&appsv1.Deployment{}, ns, "park-predictor-canary")
	})
	assert.Equal(t, "gs://models/park", storageURIOf(t, ns, "park-predictor"))
	assert.Equal(t, "gs://models/park-2", storageURIOf(t, ns, "park-predictor-canary"))
	makeAvailable(t, ns, "park-predictor")
	makeAvailable(t, ns, "park-predictor-canary")
	eventually(t, "the split back", func() bool {
		return slices.Equal(backends(t, ns, "park"), []string{"park-predictor=90", "park-predictor-canary=10"})
	})

	updateISVC(t, ns, "park", func(i *v1beta1.InferenceService) { i.Spec.Predictor.CanaryTrafficPercent = ptr.To[int64](0) })
	eventually(t, "rolled back to the revision kept", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "park-predictor-canary") && slices.Equal(backends(t, ns, "park"), []string{"park-predictor=1"})
	})
	assert.Equal(t, "gs://models/park", storageURIOf(t, ns, "park-predictor"))
}
