package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestTokenizerIsRunAndGatesReady: a scheduler with a tokenizer gets the
// tokenizer's Deployment and Service; the service is Ready only once the
// tokenizer is, and removing the tokenizer removes them and its condition.
func TestTokenizerIsRunAndGatesReady(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "llama", `
  model: {uri: hf://facebook/opt-125m}
  router:
    scheduler:
      tokenizer: {}
`)
	eventually(t, "the tokenizer", func() bool {
		return exists(&appsv1.Deployment{}, ns, "llama-tokenizer") && exists(&corev1.Service{}, ns, "llama-tokenizer")
	})
	makeAvailable(t, ns, "llama-kserve")
	makeAvailable(t, ns, "llama-kserve-router-scheduler")
	acceptPool(t, ns, "llama-inference-pool")
	eventually(t, "the picker ready", func() bool { return condition(t, ns, "llama", "SchedulerWorkloadReady") == "True/Available" })
	eventually(t, "InferencePoolReady", func() bool { return condition(t, ns, "llama", "InferencePoolReady") == "True/InferencePoolReady" })
	assert.Equal(t, "False/NotAvailable", condition(t, ns, "llama", "TokenizerReady"))
	assert.Equal(t, "False/NotAvailable", condition(t, ns, "llama", "RouterReady"), "the router waits for the tokenizer")
	assert.Equal(t, "False/NotAvailable", condition(t, ns, "llama", "Ready"))

	makeAvailable(t, ns, "llama-tokenizer")
	eventually(t, "Ready", func() bool { return condition(t, ns, "llama", "Ready") == "True/Ready" })
	assert.Equal(t, "True/Available", condition(t, ns, "llama", "TokenizerReady"))

	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "llama")
		s.Spec.Router.Scheduler.Tokenizer = nil
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "the tokenizer removed", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "llama-tokenizer") && !exists(&corev1.Service{}, ns, "llama-tokenizer") &&
			condition(t, ns, "llama", "TokenizerReady") == ""
	})
	assert.Equal(t, "True/Ready", condition(t, ns, "llama", "Ready"))
}
