package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// setConfig creates or replaces serval-config; the test's end removes it.
func setConfig(t *testing.T, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: managerNamespace}}
	if exists(cm, managerNamespace, "serval-config") {
		cm.Data = data
		require.NoError(t, k8s.Update(ctx, cm))
	} else {
		cm.Data = data
		require.NoError(t, k8s.Create(ctx, cm))
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
}

func TestKubernetesIngress(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "ing-sklearn", "sklearn-ing")
	createISVC(t, ns, "ing", "sklearn-ing", withTransformer())
	ing := &networkingv1.Ingress{}
	eventually(t, "the Ingress", func() bool { return exists(ing, ns, "ing") })
	var hosts []string
	for _, r := range ing.Spec.Rules {
		hosts = append(hosts, r.Host+"->"+r.HTTP.Paths[0].Backend.Service.Name)
	}
	assert.Equal(t, []string{"ing-" + ns + ".example.com->ing-transformer", "ing-predictor-" + ns + ".example.com->ing-predictor",
		"ing-transformer-" + ns + ".example.com->ing-transformer"}, hosts)
	eventually(t, "IngressReady", func() bool {
		return hasCondition(getISVC(t, ns, "ing"), v1beta1.ConditionIngressReady, metav1.ConditionTrue, "IngressCreated")
	})
}

func TestIngressWaitsForALoadBalancerAddress(t *testing.T) {
	setConfig(t, map[string]string{"ingress.requireLoadBalancerAddress": "true", "ingress.ingressClassName": "nginx"})
	ns := newNamespace(t)
	createClusterRuntime(t, "lb-sklearn", "sklearn-lb")
	createISVC(t, ns, "lb", "sklearn-lb")
	eventually(t, "IngressReady False without an address", func() bool {
		return hasCondition(getISVC(t, ns, "lb"), v1beta1.ConditionIngressReady, metav1.ConditionFalse, "NoLoadBalancerAddress")
	})
	ing := &networkingv1.Ingress{}
	require.True(t, exists(ing, ns, "lb"))
	assert.Equal(t, "nginx", *ing.Spec.IngressClassName)
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}}
	require.NoError(t, k8s.Status().Update(context.Background(), ing))
	eventually(t, "IngressReady with an address", func() bool {
		return hasCondition(getISVC(t, ns, "lb"), v1beta1.ConditionIngressReady, metav1.ConditionTrue, "")
	})
}

func TestClusterLocalHasNoRoute(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "local-sklearn", "sklearn-local")
	createISVC(t, ns, "local", "sklearn-local", func(i *v1beta1.InferenceService) {
		i.Labels = map[string]string{v1beta1.VisibilityLabel: v1beta1.VisibilityClusterLocal}
	})
	eventually(t, "IngressReady ClusterLocal", func() bool {
		return hasCondition(getISVC(t, ns, "local"), v1beta1.ConditionIngressReady, metav1.ConditionTrue, "ClusterLocal")
	})
	i := getISVC(t, ns, "local")
	assert.Equal(t, "http://local-predictor."+ns+".svc.cluster.local", i.Status.URL)
	consistently(t, "no Ingress", 500*time.Millisecond, func() bool { return !exists(&networkingv1.Ingress{}, ns, "local") })

	// Dropping the label makes it external: the Ingress appears.
	updateISVC(t, ns, "local", func(i *v1beta1.InferenceService) { i.Labels = nil })
	eventually(t, "the Ingress once external", func() bool { return exists(&networkingv1.Ingress{}, ns, "local") })
}

// TestGatewayAPI runs in order: the missing CRD is a condition, the CRD
// installed late starts the watch, readiness follows the parents' conditions,
// and switching modes prunes the other kind.
func TestGatewayAPI(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "gw-sklearn", "sklearn-gw")
	createISVC(t, ns, "gw", "sklearn-gw")
	eventually(t, "the Ingress in Ingress mode", func() bool { return exists(&networkingv1.Ingress{}, ns, "gw") })

	setConfig(t, map[string]string{"ingress.enableGatewayApi": "true", "ingress.gateway": "gateways/public"})
	eventually(t, "the MissingCRD condition", func() bool {
		return hasCondition(getISVC(t, ns, "gw"), v1beta1.ConditionIngressReady, metav1.ConditionFalse, v1beta1.ReasonMissingCRD)
	})
	assert.Contains(t, cond(getISVC(t, ns, "gw"), v1beta1.ConditionIngressReady).Message, "httproutes.gateway.networking.k8s.io is not installed")
	eventually(t, "the Ingress pruned after switching to Gateway API", func() bool { return !exists(&networkingv1.Ingress{}, ns, "gw") })
	quiesce(t, ns)
	noReconcileStorm(t, ns, "gw", 2*time.Second, 1)

	paths, err := testenv.UpstreamCRDPathsOf(testenv.GatewayAPI)
	require.NoError(t, err)
	installCRDsForTest(t, paths)
	for _, name := range []string{"gw", "gw-predictor"} {
		eventually(t, "HTTPRoute "+name, func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, name) })
	}
	eventually(t, "IngressReady False until a Gateway accepts", func() bool {
		c := cond(getISVC(t, ns, "gw"), v1beta1.ConditionIngressReady)
		return c != nil && c.Reason == "RouteNotReady" && c.Message == "gw: no Gateway has accepted the route yet; gw-predictor: no Gateway has accepted the route yet"
	})

	setParentStatus(t, ns, "gw", metav1.ConditionTrue)
	setParentStatus(t, ns, "gw-predictor", metav1.ConditionFalse)
	eventually(t, "the unresolved parent reported", func() bool {
		c := cond(getISVC(t, ns, "gw"), v1beta1.ConditionIngressReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Message == "gw-predictor: Gateway gateways/public: ResolvedRefs is False (BackendNotFound: service missing)"
	})
	setParentStatus(t, ns, "gw-predictor", metav1.ConditionTrue)
	eventually(t, "IngressReady once every parent accepts", func() bool {
		return hasCondition(getISVC(t, ns, "gw"), v1beta1.ConditionIngressReady, metav1.ConditionTrue, "RoutesReady")
	})

	setConfig(t, map[string]string{})
	eventually(t, "back to an Ingress, the HTTPRoutes pruned", func() bool {
		return exists(&networkingv1.Ingress{}, ns, "gw") && !exists(&gatewayv1.HTTPRoute{}, ns, "gw") && !exists(&gatewayv1.HTTPRoute{}, ns, "gw-predictor")
	})
}

// installCRDsForTest installs upstream CRDs and removes them at the test's
// end, so the next test (or -count run) starts without them again.
func installCRDsForTest(t *testing.T, paths []string) {
	t.Helper()
	// An earlier test's cleanup may still be deleting some of these CRDs
	// (a bundle such as Istio's holds many): one installed over a CRD that
	// is terminating is deleted with it, and never appears.
	listed := envtest.CRDInstallOptions{Paths: paths}
	require.NoError(t, envtest.ReadCRDFiles(&listed))
	for _, crd := range listed.CRDs {
		waitCRDGone(t, crd.Name)
	}
	opts := envtest.CRDInstallOptions{Paths: paths}
	_, err := envtest.InstallCRDs(env.Config, opts)
	require.NoError(t, err)
	// Cleanup is best effort: it only lets the test run again in the same
	// process (-count), and is not the behaviour under test. Deletion is
	// asynchronous (the API server deletes every instance first) and can be
	// slow on a loaded machine.
	t.Cleanup(func() {
		if err := envtest.UninstallCRDs(env.Config, opts); err != nil {
			t.Logf("uninstall CRDs: %v", err)
			return
		}
		// Later tests that need the CRD absent wait for it (waitCRDGone).
	})
}

// waitCRDGone waits until a CRD an earlier test installed is deleted: the API
// server deletes every instance first, which can take long on a loaded
// machine.
func waitCRDGone(t *testing.T, name string) {
	t.Helper()
	// The earlier test is over (these tests are not parallel); its cleanup
	// may have stopped at the first CRD that was already gone, so delete it
	// here too.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = name
	if err := k8s.Delete(context.Background(), crd); err != nil && !apierrors.IsNotFound(err) {
		require.NoError(t, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for exists(&apiextensionsv1.CustomResourceDefinition{}, "", name) {
		if time.Now().After(deadline) {
			t.Fatalf("the CRD %s an earlier test installed is still there", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setParentStatus plays the Gateway: Accepted True and ResolvedRefs as given.
func setParentStatus(t *testing.T, ns, name string, resolved metav1.ConditionStatus) {
	t.Helper()
	route := &gatewayv1.HTTPRoute{}
	require.True(t, exists(route, ns, name))
	gwNS := gatewayv1.Namespace("gateways")
	now := metav1.Now()
	reason, msg := "ResolvedRefs", "resolved"
	if resolved != metav1.ConditionTrue {
		reason, msg = "BackendNotFound", "service missing"
	}
	route.Status.Parents = []gatewayv1.RouteParentStatus{{
		ParentRef:      gatewayv1.ParentReference{Name: "public", Namespace: &gwNS},
		ControllerName: "example.com/gateway-controller",
		Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "accepted", LastTransitionTime: now},
			{Type: "ResolvedRefs", Status: resolved, Reason: reason, Message: msg, LastTransitionTime: now},
		},
	}}
	require.NoError(t, k8s.Status().Update(context.Background(), route))
}

// TestForeignIngressIsNotAdopted: a same-named Ingress someone else owns is
// left alone; the conflict shows on IngressReady, not on a component.
func TestForeignIngressIsNotAdopted(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "foreign-ing-sklearn", "sklearn-foreign-ing")
	pathType := networkingv1.PathTypePrefix
	theirs := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "explainer-demo", Namespace: ns, Labels: map[string]string{v1beta1.InferenceServiceLabel: "explainer-demo"}},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "theirs.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "theirs", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}
	require.NoError(t, k8s.Create(context.Background(), theirs))
	// A name ending in -explainer must not make the route the explainer's.
	createISVC(t, ns, "explainer-demo", "sklearn-foreign-ing")
	eventually(t, "the conflict on IngressReady", func() bool {
		return hasCondition(getISVC(t, ns, "explainer-demo"), v1beta1.ConditionIngressReady, metav1.ConditionFalse, v1beta1.ReasonConflict)
	})
	i := getISVC(t, ns, "explainer-demo")
	assert.Contains(t, cond(i, v1beta1.ConditionIngressReady).Message, "Ingress "+ns+"/explainer-demo exists and is not controlled by this InferenceService")
	assert.Nil(t, cond(i, v1beta1.ConditionExplainerReady))
	assert.True(t, hasCondition(i, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonConflict))
	ing := &networkingv1.Ingress{}
	require.True(t, exists(ing, ns, "explainer-demo"))
	assert.Equal(t, "theirs.example.com", ing.Spec.Rules[0].Host)
}
