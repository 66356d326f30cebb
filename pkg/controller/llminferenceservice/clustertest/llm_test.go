package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llmconfig"
)

func createService(t *testing.T, ns, name, spec string) {
	t.Helper()
	svc := &v1alpha2.LLMInferenceService{}
	require.NoError(t, sigsyaml.Unmarshal([]byte("spec:\n"+spec), svc))
	svc.Name, svc.Namespace = name, ns
	require.NoError(t, k8s.Create(context.Background(), svc))
}

// createGateway makes a programmed Gateway with an address, as a Gateway
// implementation would report it.
func createGateway(t *testing.T, ns, name, address string) {
	t.Helper()
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: "inference", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	require.NoError(t, k8s.Create(context.Background(), gw))
	gw.Status = gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: address}},
		Conditions: []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: metav1.Now()},
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}}
	require.NoError(t, k8s.Status().Update(context.Background(), gw))
}

func accepted() []metav1.Condition {
	return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", LastTransitionTime: metav1.Now()}}
}

// acceptPool plays the Gateway for an InferencePool.
func acceptPool(t *testing.T, ns, name string) {
	t.Helper()
	require.NoError(t, retryOnConflict(func() error {
		pool := &igwapi.InferencePool{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, pool); err != nil {
			return err
		}
		pool.Status.Parents = []igwapi.ParentStatus{{ParentRef: igwapi.ParentReference{Name: "inference-gateway"}, Conditions: accepted()}}
		return k8s.Status().Update(context.Background(), pool)
	}))
}

// acceptRoute plays the Gateway for an HTTPRoute.
func acceptRoute(t *testing.T, ns, name string) {
	t.Helper()
	require.NoError(t, retryOnConflict(func() error {
		route := &gatewayv1.HTTPRoute{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, route); err != nil {
			return err
		}
		route.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: route.Spec.ParentRefs[0],
			ControllerName: "example.com/gateway", Conditions: accepted()}}
		return k8s.Status().Update(context.Background(), route)
	}))
}

// TestReadyIsGatedOnEveryChild: a service with a managed route and a
// scheduler gets its workload, picker, pool and route, and is Ready only
// once the model pods, the picker, the pool and the route all are; at
// steady state a reconcile writes nothing.
func TestReadyIsGatedOnEveryChild(t *testing.T) {
	ns := newNamespace(t)
	createGateway(t, ns, "inference-gateway", "10.0.0.10")
	createService(t, ns, "llama", `
  model: {uri: hf://meta-llama/Llama-3.1-8B-Instruct}
  router:
    route: {}
    gateway: {refs: [{name: inference-gateway}]}
    scheduler: {}
`)
	eventually(t, "every child", func() bool {
		return exists(&appsv1.Deployment{}, ns, "llama-kserve") && exists(&corev1.Service{}, ns, "llama-kserve-workload-svc") &&
			exists(&appsv1.Deployment{}, ns, "llama-kserve-router-scheduler") && exists(&corev1.Service{}, ns, "llama-epp-service") &&
			exists(&corev1.ServiceAccount{}, ns, "llama-epp-sa") &&
			exists(&rbacv1.RoleBinding{}, ns, "llama-epp-rb") && exists(&igwapi.InferencePool{}, ns, "llama-inference-pool") &&
			exists(&gatewayv1.HTTPRoute{}, ns, "llama-kserve-route")
	})
	eventually(t, "PresetsCombined", func() bool { return condition(t, ns, "llama", "PresetsCombined") == "True/Combined" })
	assert.Equal(t, []v1alpha2.AppliedConfigRef{
		{Name: "serval-config-llm-scheduler", Namespace: managerNamespace, Source: "Preset"},
		{Name: "serval-config-llm-router-route", Namespace: managerNamespace, Source: "Preset"},
		{Name: "serval-config-llm-template", Namespace: managerNamespace, Source: "Preset"},
	}, get(t, ns, "llama").Status.AppliedConfigRefs)
	route := &gatewayv1.HTTPRoute{}
	require.True(t, exists(route, ns, "llama-kserve-route"))
	assert.Equal(t, gatewayv1.ObjectName("inference-gateway"), route.Spec.ParentRefs[0].Name, "the route attaches to router.gateway's Gateway")
	assert.Equal(t, gatewayv1.ObjectName("llama-inference-pool"), route.Spec.Rules[0].BackendRefs[0].Name)

	steps := []struct {
		what, condition, want string
		do                    func()
	}{
		{"the model pods", "MainWorkloadReady", "True/Available", func() { makeAvailable(t, ns, "llama-kserve") }},
		{"the picker", "SchedulerWorkloadReady", "True/Available", func() { makeAvailable(t, ns, "llama-kserve-router-scheduler") }},
		{"the pool", "InferencePoolReady", "True/InferencePoolReady", func() { acceptPool(t, ns, "llama-inference-pool") }},
		{"the route", "HTTPRoutesReady", "True/HTTPRoutesReady", func() { acceptRoute(t, ns, "llama-kserve-route") }},
	}
	for i, step := range steps {
		assert.Equal(t, "False", condition(t, ns, "llama", "Ready")[:5], "not Ready before %s", step.what)
		step.do()
		eventually(t, step.what+" ready", func() bool { return condition(t, ns, "llama", step.condition) == step.want })
		if i < len(steps)-1 {
			eventually(t, "still not Ready", func() bool { return condition(t, ns, "llama", "Ready") != "" })
			assert.NotEqual(t, "True/Ready", condition(t, ns, "llama", "Ready"), "Ready before %s", steps[i+1].what)
		}
	}
	eventually(t, "Ready", func() bool { return condition(t, ns, "llama", "Ready") == "True/Ready" })
	svc := get(t, ns, "llama")
	assert.Equal(t, "http://10.0.0.10/"+ns+"/llama", svc.Status.URL, "the URL is the Gateway's address and the service's path")
	assert.Equal(t, "True/GatewaysReady", condition(t, ns, "llama", "GatewaysReady"))

	// Steady state: a reconcile of the unchanged service writes nothing.
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	before, reconciled := len(writes.Into(ns)), reconciles.Of("llminferenceservice", ns, "llama")
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "llama")
		s.Annotations = map[string]string{"touched": "yes"}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "a reconcile", func() bool { return reconciles.Of("llminferenceservice", ns, "llama") > reconciled })
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	assert.Empty(t, writes.Into(ns)[before:], "an unchanged service is not written to")
}

// TestMissingPresetIsNamedAndNoticed: a baseRef that does not exist is
// named in PresetsCombined; creating it brings the service up, merged;
// deleting it is noticed too.
func TestMissingPresetIsNamedAndNoticed(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "opt", `
  model: {uri: hf://facebook/opt-125m}
  baseRefs: [{name: tuned}]
`)
	eventually(t, "ConfigNotFound", func() bool { return condition(t, ns, "opt", "PresetsCombined") == "False/ConfigNotFound" })
	assert.Equal(t, "LLMInferenceServiceConfig tuned is not in namespace "+ns+" or serval-system", message(t, ns, "opt", "PresetsCombined"))
	assert.False(t, exists(&appsv1.Deployment{}, ns, "opt-kserve"), "nothing is rendered without the presets")

	require.NoError(t, k8s.Create(context.Background(), &v1alpha2.LLMInferenceServiceConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "tuned", Namespace: ns},
		Spec:       v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](3)}}}))
	eventually(t, "the Deployment with the preset's replicas", func() bool {
		dep := &appsv1.Deployment{}
		return exists(dep, ns, "opt-kserve") && ptr.Deref(dep.Spec.Replicas, 0) == 3
	})
	eventually(t, "PresetsCombined", func() bool { return condition(t, ns, "opt", "PresetsCombined") == "True/Combined" })
	makeAvailable(t, ns, "opt-kserve")
	eventually(t, "Ready without a router", func() bool { return condition(t, ns, "opt", "Ready") == "True/Ready" })
	assert.Equal(t, "http://opt-kserve-workload-svc."+ns+".svc.cluster.local:8000", get(t, ns, "opt").Status.URL)

	// The preset says who uses it.
	eventually(t, "ConfigInUse", func() bool { return configCondition(t, ns, "tuned", "ConfigInUse") == "True/InUse" })
	tuned := getConfig(t, ns, "tuned")
	assert.Equal(t, []v1alpha2.UntypedObjectReference{{Namespace: ns, Name: "opt"}}, tuned.Status.ReferencedBy)
	assert.Equal(t, "True/Valid", configCondition(t, ns, "tuned", "Ready"))
	assert.Contains(t, tuned.Finalizers, v1alpha2.ConfigFinalizer)

	// Deleted while in use, the preset is held, naming its user, and the
	// service keeps running on it.
	require.NoError(t, k8s.Delete(context.Background(), &v1alpha2.LLMInferenceServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: "tuned", Namespace: ns}}))
	eventually(t, "DeletionBlocked", func() bool { return configCondition(t, ns, "tuned", "ConfigInUse") == "True/DeletionBlocked" })
	inUse := meta.FindStatusCondition(getConfig(t, ns, "tuned").Status.Conditions, "ConfigInUse")
	require.NotNil(t, inUse)
	assert.Contains(t, inUse.Message, ns+"/opt", "the message names the user")
	eventually(t, "the DeletionBlocked Event", func() bool { return hasEvent(t, ns, "tuned", "DeletionBlocked") })
	assert.Equal(t, "True/Ready", condition(t, ns, "opt", "Ready"), "the service keeps its preset")
	assert.Equal(t, "True/Combined", condition(t, ns, "opt", "PresetsCombined"))

	// Once its user is gone, the preset goes.
	require.NoError(t, k8s.Delete(context.Background(), get(t, ns, "opt")))
	eventually(t, "the preset deleted", func() bool {
		return apierrors.IsNotFound(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "tuned"}, &v1alpha2.LLMInferenceServiceConfig{}))
	})
}

// TestUnusedPresetIsNotHeld: a preset no service uses carries no
// finalizer and is deleted at once.
func TestUnusedPresetIsNotHeld(t *testing.T) {
	ns := newNamespace(t)
	require.NoError(t, k8s.Create(context.Background(), &v1alpha2.LLMInferenceServiceConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "spare", Namespace: ns},
		Spec:       v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](2)}}}))
	eventually(t, "NotInUse", func() bool { return configCondition(t, ns, "spare", "ConfigInUse") == "False/NotInUse" })
	assert.NotContains(t, getConfig(t, ns, "spare").Finalizers, v1alpha2.ConfigFinalizer, "only a preset in use is held")
	require.NoError(t, k8s.Delete(context.Background(), getConfig(t, ns, "spare")))
	eventually(t, "the preset deleted", func() bool {
		return apierrors.IsNotFound(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "spare"}, &v1alpha2.LLMInferenceServiceConfig{}))
	})
}

// TestUsersOwnPool: with router.scheduler.pool.ref, Serval makes no pool or
// picker, points the route at the user's pool, and waits for it.
func TestUsersOwnPool(t *testing.T) {
	ns := newNamespace(t)
	createGateway(t, ns, "inference-gateway", "10.0.0.11")
	createService(t, ns, "shared-llm", `
  model: {uri: hf://facebook/opt-125m}
  router:
    route: {}
    gateway: {refs: [{name: inference-gateway}]}
    scheduler: {pool: {ref: {name: shared}}}
`)
	eventually(t, "the route", func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, "shared-llm-kserve-route") })
	route := &gatewayv1.HTTPRoute{}
	require.True(t, exists(route, ns, "shared-llm-kserve-route"))
	assert.Equal(t, gatewayv1.ObjectName("shared"), route.Spec.Rules[0].BackendRefs[0].Name, "the route goes to the user's pool")
	eventually(t, "InferencePoolNotFound", func() bool {
		return condition(t, ns, "shared-llm", "InferencePoolReady") == "False/InferencePoolNotFound"
	})
	assert.False(t, exists(&igwapi.InferencePool{}, ns, "shared-llm-inference-pool"), "no pool of Serval's")
	assert.False(t, exists(&appsv1.Deployment{}, ns, "shared-llm-kserve-router-scheduler"), "no picker of Serval's")

	pool := &igwapi.InferencePool{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns}, Spec: igwapi.InferencePoolSpec{
		Selector: igwapi.LabelSelector{MatchLabels: map[igwapi.LabelKey]igwapi.LabelValue{"app": "x"}}, TargetPorts: []igwapi.Port{{Number: 8000}},
		EndpointPickerRef: &igwapi.EndpointPickerRef{Name: "epp", Port: &igwapi.Port{Number: 9002}}}}
	require.NoError(t, k8s.Create(context.Background(), pool))
	acceptPool(t, ns, "shared")
	// The user's pool is not watched (it carries no Serval label): a change
	// of the service, or of its children, brings the next look at it.
	makeAvailable(t, ns, "shared-llm-kserve")
	eventually(t, "the user's pool ready", func() bool {
		return condition(t, ns, "shared-llm", "InferencePoolReady") == "True/InferencePoolReady"
	})
}

// TestGatewayMustExistAndBeProgrammed: a route whose Gateway does not
// exist stops the router (RefsInvalid); once it exists but is not
// programmed yet, the service is not Ready, saying so.
func TestGatewayMustExistAndBeProgrammed(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "gw-wait", `
  model: {uri: hf://facebook/opt-125m}
  router:
    route: {}
    gateway: {refs: [{name: later}]}
`)
	makeAvailable(t, ns, "gw-wait-kserve")
	eventually(t, "RefsInvalid, the Gateway missing", func() bool {
		return condition(t, ns, "gw-wait", "GatewaysReady") == "False/RefsInvalid" &&
			message(t, ns, "gw-wait", "GatewaysReady") == "Gateway "+ns+"/later does not exist"
	})
	eventually(t, "Ready says RefsInvalid", func() bool { return condition(t, ns, "gw-wait", "Ready") == "False/RefsInvalid" })
	assert.False(t, exists(&gatewayv1.HTTPRoute{}, ns, "gw-wait-kserve-route"), "no route to a Gateway that does not exist")

	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: "inference", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	require.NoError(t, k8s.Create(context.Background(), gw))
	// The Gateway is not watched (it is not Serval's): a change of the
	// service stands in for the next look at it.
	touch := func() {
		require.NoError(t, retryOnConflict(func() error {
			s := get(t, ns, "gw-wait")
			s.Annotations = map[string]string{"touched": time.Now().String()}
			return k8s.Update(context.Background(), s)
		}))
	}
	touch()
	eventually(t, "the route", func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, "gw-wait-kserve-route") })
	acceptRoute(t, ns, "gw-wait-kserve-route")
	touch()
	eventually(t, "not programmed yet", func() bool {
		return message(t, ns, "gw-wait", "GatewaysReady") == "Gateway "+ns+"/later is not programmed yet"
	})
	gw.Status = gatewayv1.GatewayStatus{Addresses: []gatewayv1.GatewayStatusAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: "10.0.0.12"}},
		Conditions: []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: metav1.Now()}}}
	require.NoError(t, k8s.Status().Update(context.Background(), gw))
	touch()
	eventually(t, "Ready through the Gateway", func() bool { return condition(t, ns, "gw-wait", "Ready") == "True/Ready" })
	assert.Equal(t, "http://10.0.0.12/"+ns+"/gw-wait", get(t, ns, "gw-wait").Status.URL)
}

// TestUndecodableSpecIsReportedAndLeftAlone: a stored spec that does not
// decode (written past admission, into a schemaless pod template) neither
// stops the controller nor loses the service: it is named in Ready, and
// nothing is rendered for it.
func TestUndecodableSpecIsReportedAndLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	u := &unstructured.Unstructured{}
	require.NoError(t, sigsyaml.Unmarshal([]byte(`
apiVersion: serving.serval.dev/v1alpha2
kind: LLMInferenceService
metadata: {name: broken}
spec:
  model: {uri: hf://facebook/opt-125m}
  template:
    containers:
    - name: main
      args: --not-a-list
`), &u.Object))
	u.SetNamespace(ns)
	require.NoError(t, k8s.Create(context.Background(), u))

	eventually(t, "UndecodableSpec", func() bool { return condition(t, ns, "broken", "Ready") == "False/UndecodableSpec" })
	assert.Contains(t, message(t, ns, "broken", "Ready"), "args")
	assert.False(t, exists(&appsv1.Deployment{}, ns, "broken-kserve"), "nothing is rendered from a spec that does not decode")

	// A good service beside it is served as usual.
	createService(t, ns, "opt", `
  model: {uri: hf://facebook/opt-125m}
`)
	eventually(t, "the good service's Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "opt-kserve") })
}

// TestMissingGatewayRefs: router.gateway.refs naming a Gateway that does
// not exist stop the router before the scheduler, as in KServe:
// GatewaysReady and Ready say RefsInvalid, no picker, pool or route is
// made; once the Gateway exists, they are.
func TestMissingGatewayRefs(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "gw-missing", `
  model: {uri: hf://facebook/opt-125m}
  router:
    route: {}
    gateway: {refs: [{name: later}]}
    scheduler: {}
`)
	makeAvailable(t, ns, "gw-missing-kserve")
	eventually(t, "RefsInvalid", func() bool { return condition(t, ns, "gw-missing", "GatewaysReady") == "False/RefsInvalid" })
	assert.Equal(t, "Gateway "+ns+"/later does not exist", message(t, ns, "gw-missing", "GatewaysReady"))
	eventually(t, "Ready says RefsInvalid", func() bool { return condition(t, ns, "gw-missing", "Ready") == "False/RefsInvalid" })
	assert.Empty(t, condition(t, ns, "gw-missing", "SchedulerWorkloadReady"), "the router's other parts are not reported")
	assert.False(t, exists(&appsv1.Deployment{}, ns, "gw-missing-kserve-router-scheduler"), "no picker")
	assert.False(t, exists(&igwapi.InferencePool{}, ns, "gw-missing-inference-pool"), "no pool")
	assert.False(t, exists(&gatewayv1.HTTPRoute{}, ns, "gw-missing-kserve-route"), "no route")

	createGateway(t, ns, "later", "10.0.0.12")
	// The Gateway is not watched: a touch of the service stands in for the
	// recheck, which comes every GatewayRecheckInterval.
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "gw-missing")
		s.Annotations = map[string]string{"touched": "yes"}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "the picker", func() bool { return exists(&appsv1.Deployment{}, ns, "gw-missing-kserve-router-scheduler") })
	eventually(t, "the route", func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, "gw-missing-kserve-route") })
	eventually(t, "RefsInvalid gone", func() bool { return condition(t, ns, "gw-missing", "GatewaysReady") != "False/RefsInvalid" })

	// The Gateway gone again, the router's children are kept as they run,
	// neither deleted nor written.
	require.NoError(t, k8s.Delete(context.Background(), &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns}}))
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "gw-missing")
		s.Annotations = map[string]string{"touched": "again"}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "RefsInvalid again", func() bool { return condition(t, ns, "gw-missing", "GatewaysReady") == "False/RefsInvalid" })
	assert.True(t, exists(&appsv1.Deployment{}, ns, "gw-missing-kserve-router-scheduler"), "the picker kept")
	assert.True(t, exists(&igwapi.InferencePool{}, ns, "gw-missing-inference-pool"), "the pool kept")
	assert.True(t, exists(&gatewayv1.HTTPRoute{}, ns, "gw-missing-kserve-route"), "the route kept")
}

// TestManagedDRA: with a device class, the API server takes the
// ResourceClaimTemplate and the model pods claim from it; without, the
// template goes.
func TestManagedDRA(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "dra", `
  model: {uri: hf://facebook/opt-125m}
`)
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "dra-kserve") })
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "dra")
		s.Annotations = map[string]string{v1alpha2.DRADeviceClassAnnotation: "gpu.example.com", v1alpha2.DRADeviceCountAnnotation: "2"}
		return k8s.Update(context.Background(), s)
	}))
	rct := &resourcev1.ResourceClaimTemplate{}
	eventually(t, "the ResourceClaimTemplate", func() bool { return exists(rct, ns, "dra-managed-dra") })
	require.Len(t, rct.Spec.Spec.Devices.Requests, 1)
	assert.Equal(t, "gpu.example.com", rct.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName)
	assert.Equal(t, int64(2), rct.Spec.Spec.Devices.Requests[0].Exactly.Count)
	eventually(t, "the pods' claim", func() bool {
		dep := &appsv1.Deployment{}
		return exists(dep, ns, "dra-kserve") && len(dep.Spec.Template.Spec.ResourceClaims) == 1 &&
			len(dep.Spec.Template.Spec.Containers[0].Resources.Claims) == 1
	})

	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "dra")
		s.Annotations = nil
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "the template pruned", func() bool { return !exists(&resourcev1.ResourceClaimTemplate{}, ns, "dra-managed-dra") })
	dep := &appsv1.Deployment{}
	require.True(t, exists(dep, ns, "dra-kserve"))
	assert.Empty(t, dep.Spec.Template.Spec.ResourceClaims, "the pods claim nothing")
}

// TestChartPresetIsNotHeld: a preset the chart installed (labelled bundled
// in Serval's namespace) is Helm's: in use, it says so, but its deletion is
// not held (helm uninstall waits for it).
func TestChartPresetIsNotHeld(t *testing.T) {
	ns := newNamespace(t)
	require.NoError(t, k8s.Create(context.Background(), &v1alpha2.LLMInferenceServiceConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "chart-" + ns, Namespace: managerNamespace, Labels: map[string]string{llmconfig.BundledLabel: "true"}},
		Spec:       v1alpha2.LLMInferenceServiceSpec{WorkloadSpec: v1alpha2.WorkloadSpec{Replicas: ptr.To[int32](2)}}}))
	createService(t, ns, "opt", `
  model: {uri: hf://facebook/opt-125m}
  baseRefs: [{name: chart-`+ns+`}]
`)
	eventually(t, "InUse", func() bool { return configCondition(t, managerNamespace, "chart-"+ns, "ConfigInUse") == "True/InUse" })
	assert.NotContains(t, getConfig(t, managerNamespace, "chart-"+ns).Finalizers, v1alpha2.ConfigFinalizer)
	require.NoError(t, k8s.Delete(context.Background(), getConfig(t, managerNamespace, "chart-"+ns)))
	eventually(t, "the preset deleted", func() bool {
		return apierrors.IsNotFound(k8s.Get(context.Background(), types.NamespacedName{Namespace: managerNamespace, Name: "chart-" + ns}, &v1alpha2.LLMInferenceServiceConfig{}))
	})
}

// TestNoGatewaysReadyWithoutRefs: GatewaysReady is about the Gateways the
// service names; a route to the default Gateway gets none, as in KServe.
func TestNoGatewaysReadyWithoutRefs(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "default-gw", `
  model: {uri: hf://facebook/opt-125m}
  router:
    route: {}
`)
	makeAvailable(t, ns, "default-gw-kserve")
	eventually(t, "the route", func() bool { return exists(&gatewayv1.HTTPRoute{}, ns, "default-gw-kserve-route") })
	acceptRoute(t, ns, "default-gw-kserve-route")
	eventually(t, "HTTPRoutesReady", func() bool { return condition(t, ns, "default-gw", "HTTPRoutesReady") == "True/HTTPRoutesReady" })
	assert.Empty(t, condition(t, ns, "default-gw", "GatewaysReady"), "no GatewaysReady without router.gateway.refs")
}
