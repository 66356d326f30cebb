package clustertest

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/migrate"
)

const virtualServiceCRD = "virtualservices.networking.istio.io"

func virtualService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("networking.istio.io/v1")
	u.SetKind("VirtualService")
	return u
}

// installKnative installs Knative's CRDs once: they cannot be deleted here
// (their conversion webhook points at a Knative installation that does not
// exist), so a repeated run starts with them present.
func installKnative(t *testing.T) {
	t.Helper()
	if exists(&apiextensionsv1.CustomResourceDefinition{}, "", "services.serving.knative.dev") {
		return
	}
	paths, err := testenv.UpstreamCRDPathsOf(testenv.Knative)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	require.NoError(t, err)
}

// installIstio installs Istio's CRDs for the test; they go at its end.
func installIstio(t *testing.T) {
	t.Helper()
	paths, err := testenv.UpstreamCRDPathsOf(testenv.Istio)
	require.NoError(t, err)
	installCRDsForTest(t, paths)
}

// migrated runs `serval migrate` on a KServe manifest and creates the result.
func migrated(t *testing.T, file, ns string) *unstructured.Unstructured {
	t.Helper()
	var out, errs bytes.Buffer
	code := migrate.Run(migrate.RunOptions{Files: []string{filepath.Join("testdata", file)}}, nil, &out, &errs)
	require.Equal(t, migrate.ExitOK, code, "serval migrate: %s", errs.String())
	obj := &unstructured.Unstructured{}
	require.NoError(t, sigsyaml.Unmarshal(out.Bytes(), &obj.Object))
	obj.SetNamespace(ns)
	require.NoError(t, k8s.Create(context.Background(), obj))
	return obj
}

// TestServerlessSampleWithIstio: KServe's Serverless transformer sample,
// migrated, goes Ready with one VirtualService that routes the top-level
// host and the cluster-local host to the transformer through the local
// gateway; idle, it costs no writes; turning Istio off prunes the routes.
func TestServerlessSampleWithIstio(t *testing.T) {
	installKnative(t)
	installIstio(t)
	setKnativeFeatures(t, map[string]string{"kubernetes.podspec-init-containers": "enabled"})
	ns := newNamespace(t)
	createClusterRuntime(t, "istio-pytorch", "pytorch")
	start := writes.total.Load()
	migrated(t, "kserve-serverless-transformer.yaml", ns)

	for _, c := range []string{"predictor", "transformer"} {
		name := "torch-transformer-" + c
		eventually(t, "the Knative Service "+name, func() bool { _, err := getKsvc(ns, name); return err == nil })
		playKnative(t, ns, name, name+"-00001")
	}
	vs := virtualService()
	eventually(t, "the VirtualService", func() bool { return exists(vs, ns, "torch-transformer") })
	hosts, _, _ := unstructured.NestedStringSlice(vs.Object, "spec", "hosts")
	assert.Equal(t, []string{"torch-transformer-" + ns + ".example.com", "torch-transformer." + ns + ".svc.cluster.local"}, hosts)
	routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	require.Len(t, routes, 1, "no explainer: one route")
	authority, _, _ := unstructured.NestedString(routes[0].(map[string]any), "rewrite", "authority")
	assert.Equal(t, "torch-transformer-transformer."+ns+".svc.cluster.local", authority, "the top-level host reaches the transformer")
	local := &corev1.Service{}
	eventually(t, "the Service for the local gateway", func() bool { return exists(local, ns, "torch-transformer") })
	assert.Equal(t, "knative-local-gateway.istio-system.svc.cluster.local", local.Spec.ExternalName)

	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "torch-transformer"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	isvc := getISVC(t, ns, "torch-transformer")
	assert.Equal(t, "http://torch-transformer-"+ns+".example.com", isvc.Status.URL)
	assert.Equal(t, "http://torch-transformer."+ns+".svc.cluster.local", isvc.Status.Address.URL)
	assert.Equal(t, "VirtualServiceCreated", cond(isvc, v1beta1.ConditionIngressReady).Reason)
	assert.Equal(t, "http://torch-transformer-transformer."+ns+".knative.example.com", isvc.Status.Components[v1beta1.TransformerComponent].URL)
	quiesce(t, ns)
	t.Logf("writes from create to Ready: %d", len(writes.since(start, ns)))

	// Idle: a ConfigMap event re-enqueues it and nothing is written.
	before := writes.total.Load()
	reconcilesBefore := reconciled.of(ns, "torch-transformer")
	setConfig(t, map[string]string{"deploy.defaultDeploymentMode": "Standard"})
	waitReconciled(t, ns, "torch-transformer", reconcilesBefore)
	quiesce(t, ns)
	assert.Empty(t, writes.since(before, ns), "an idle re-reconcile writes nothing")

	setConfig(t, map[string]string{"ingress.enableIstioVirtualService": "false"})
	eventually(t, "the VirtualService and its Service pruned", func() bool {
		return !exists(virtualService(), ns, "torch-transformer") && !exists(&corev1.Service{}, ns, "torch-transformer")
	})
	eventually(t, "Knative's own URL", func() bool {
		return getISVC(t, ns, "torch-transformer").Status.URL == "http://torch-transformer-transformer."+ns+".knative.example.com"
	})
}

// TestVirtualServiceCRDInstalledLate: Istio asked for in Standard mode with
// no VirtualService CRD is reported with no requeue storm; once the CRD
// appears the VirtualService routes straight to the Services; the CRD
// removed while in use is reported the same way; switching back to
// Ingresses prunes what is left.
func TestVirtualServiceCRDInstalledLate(t *testing.T) {
	waitCRDGone(t, virtualServiceCRD)
	ns := newNamespace(t)
	createClusterRuntime(t, "late-sklearn", "sklearn-late")
	setConfig(t, map[string]string{"ingress.enableIstioVirtualService": "true"})
	createISVC(t, ns, "late", "sklearn-late")
	eventually(t, "MissingCRD", func() bool {
		return hasCondition(getISVC(t, ns, "late"), v1beta1.ConditionIngressReady, metav1.ConditionFalse, v1beta1.ReasonMissingCRD)
	})
	assert.Equal(t, "the CRD virtualservices.networking.istio.io is not installed, and serval-config routes InferenceServices with VirtualService; "+
		"install Istio or set ingress.enableIstioVirtualService to false", cond(getISVC(t, ns, "late"), v1beta1.ConditionIngressReady).Message)
	quiesce(t, ns)
	noReconcileStorm(t, ns, "late", 2*time.Second, 1)

	installIstio(t)
	vs := virtualService()
	eventually(t, "the VirtualService", func() bool { return exists(vs, ns, "late") })
	routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	require.Len(t, routes, 1)
	dest, _, _ := unstructured.NestedSlice(routes[0].(map[string]any), "route")
	host, _, _ := unstructured.NestedString(dest[0].(map[string]any), "destination", "host")
	assert.Equal(t, "late-predictor."+ns+".svc.cluster.local", host, "Standard mode: straight to the Service")
	eventually(t, "IngressReady", func() bool {
		return hasCondition(getISVC(t, ns, "late"), v1beta1.ConditionIngressReady, metav1.ConditionTrue, "VirtualServiceCreated")
	})
	assert.False(t, exists(&networkingv1.Ingress{}, ns, "late"), "no Ingress beside the VirtualService")

	// The CRD removed while in use: the route is gone with it, and the
	// InferenceService says so, with an Event, and no retry loop.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = virtualServiceCRD
	require.NoError(t, k8s.Delete(context.Background(), crd))
	eventually(t, "MissingCRD once the CRD is removed", func() bool {
		return hasCondition(getISVC(t, ns, "late"), v1beta1.ConditionIngressReady, metav1.ConditionFalse, v1beta1.ReasonMissingCRD)
	})
	assert.Contains(t, cond(getISVC(t, ns, "late"), v1beta1.ConditionReady).Message, "IngressReady (MissingCRD: ")
	eventually(t, "the NotReady Event", func() bool {
		return hasEvent(t, ns, v1beta1.EventNotReady, "virtualservices.networking.istio.io is not installed")
	})
	waitCRDGone(t, virtualServiceCRD)
	quiesce(t, ns)
	noReconcileStorm(t, ns, "late", 2*time.Second, 1)

	setConfig(t, map[string]string{})
	eventually(t, "back to an Ingress, the VirtualService pruned", func() bool {
		return exists(&networkingv1.Ingress{}, ns, "late") && !exists(virtualService(), ns, "late") && !exists(&corev1.Service{}, ns, "late")
	})
}
