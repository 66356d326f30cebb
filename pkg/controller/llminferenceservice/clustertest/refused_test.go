package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
