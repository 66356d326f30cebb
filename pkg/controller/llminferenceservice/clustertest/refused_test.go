package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestRefusedGenerationIsNotInForce: a new generation whose Deployment the
// API server refuses (here a request over its limit) leaves
// observedGeneration at the generation in force, and the workload's
// condition and Ready say why, while the previous pods still serve.
func TestRefusedGenerationIsNotInForce(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "llama", "  model: {uri: hf://facebook/opt-125m}\n")
	makeAvailable(t, ns, "llama-kserve")
	eventually(t, "Ready", func() bool { return condition(t, ns, "llama", "Ready") == "True/Ready" })
	served := get(t, ns, "llama").Generation
	require.Equal(t, served, get(t, ns, "llama").Status.ObservedGeneration)

	require.NoError(t, retryOnConflict(func() error {
		svc := get(t, ns, "llama")
		svc.Spec.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
		return k8s.Update(context.Background(), svc)
	}))
	eventually(t, "the refusal", func() bool { return condition(t, ns, "llama", "MainWorkloadReady") == "False/ApplyRejected" })
	svc := get(t, ns, "llama")
	assert.Greater(t, svc.Generation, served)
	assert.Equal(t, served, svc.Status.ObservedGeneration, "the refused generation is not observed as in force")
	assert.Equal(t, "False/ApplyRejected", condition(t, ns, "llama", "Ready"))
	msg := message(t, ns, "llama", "MainWorkloadReady")
	assert.Contains(t, msg, "must be less than or equal to cpu limit")
	assert.Contains(t, msg, "the previous generation's pods still serve")

	// Fixed, the generation is in force again.
	require.NoError(t, retryOnConflict(func() error {
		svc := get(t, ns, "llama")
		svc.Spec.Template = nil
		return k8s.Update(context.Background(), svc)
	}))
	eventually(t, "Ready again", func() bool {
		s := get(t, ns, "llama")
		return condition(t, ns, "llama", "Ready") == "True/Ready" && s.Status.ObservedGeneration == s.Generation
	})
}

// TestTemplateBombStoredPastAdmission: a service whose template passes a
// bound (stored with the webhook bypassed, as here) fails with a condition
// naming the bound, and the manager renders no more than the bound.
func TestTemplateBombStoredPastAdmission(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "bomb", "  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, env: [{name: X, value: '{{ range 20000000 }}aaaaaaaaaa{{ end }}'}]}]\n")
	eventually(t, "the condition", func() bool { return condition(t, ns, "bomb", "PresetsCombined") == "False/TemplateLimitExceeded" })
	assert.Contains(t, message(t, ns, "bomb", "PresetsCombined"), "the output passes the bound of 65536 (serval-config templates.maxOutputBytes)")
	assert.Equal(t, "False/TemplateLimitExceeded", condition(t, ns, "bomb", "Ready"))
}

// TestTemplateOutputWritesNoStructure: a model name whose template prints
// a quote and then the JSON of an HTTPRoute spec (the injection a render
// of the spec's whole text let through, stored here past admission) is a
// model name: the workload renders with it, and no HTTPRoute is made.
func TestTemplateOutputWritesNoStructure(t *testing.T) {
	ns := newNamespace(t)
	quote := "{{ printf `%c` 34 }}"
	name := "x" + quote + `},"router":{"route":{"http":{"spec":{"hostnames":["victim.example.com"]}}}},"z":{"a":` + quote + "b"
	createService(t, ns, "inject", "  model:\n    uri: hf://facebook/opt-125m\n    name: '"+name+"'\n")
	eventually(t, "the workload", func() bool {
		return exists(&appsv1.Deployment{}, ns, "inject-kserve") && condition(t, ns, "inject", "PresetsCombined") == "True/Combined"
	})
	routes := &gwapiv1.HTTPRouteList{}
	require.NoError(t, k8s.List(context.Background(), routes, client.InNamespace(ns)))
	assert.Empty(t, routes.Items, "a route written by a template's output")
	d := &appsv1.Deployment{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "inject-kserve"}, d))
	assert.Contains(t, d.Spec.Template.Spec.Containers[0].Args, name,
		"the preset's {{ .Spec.Model.Name }} prints the name as written, as KServe's does")
}

// TestMissingServiceAccountIsNamed: a template that names a ServiceAccount
// that does not exist makes no workload (no pod of it could be created)
// and says so on the workload's condition, naming the account and the
// field; once the account is created, the workload is made.
func TestMissingServiceAccountIsNamed(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "sa", "  model: {uri: hf://facebook/opt-125m}\n  template:\n    serviceAccountName: model-reader\n    containers: [{name: main}]\n")
	eventually(t, "the condition", func() bool { return condition(t, ns, "sa", "MainWorkloadReady") == "False/ServiceAccountNotFound" })
	assert.Equal(t, "spec.template.serviceAccountName names the ServiceAccount model-reader, which does not exist in namespace "+ns+
		": no pod could be created; create it, or name another", message(t, ns, "sa", "MainWorkloadReady"))
	assert.False(t, exists(&appsv1.Deployment{}, ns, "sa-kserve"))
	require.NoError(t, k8s.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "model-reader"}}))
	deadline := time.Now().Add(2 * time.Minute) // looked for again after the memo's TTL
	for !exists(&appsv1.Deployment{}, ns, "sa-kserve") {
		require.True(t, time.Now().Before(deadline), "the workload once the account exists")
		time.Sleep(200 * time.Millisecond)
	}
}
