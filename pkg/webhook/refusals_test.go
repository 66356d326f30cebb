package webhook_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/webhook"
)

// TestRefusalsAreCounted: a refused create counts once under its kind and
// operation; an admitted one does not; the series of every kind exists
// before its first refusal (other tests of the package refuse some).
func TestRefusalsAreCounted(t *testing.T) {
	count := func(kind, op string) float64 {
		t.Helper()
		v, found, err := testenv.MetricSum(webhook.RefusalsMetric, map[string]string{"kind": kind, "operation": op})
		require.NoError(t, err)
		require.True(t, found, "the series of %s %s exists", kind, op)
		return v
	}
	for _, kind := range []string{"InferenceService", "ServingRuntime", "LocalModelNodeGroup", "ClusterServingRuntime"} {
		count(kind, "DELETE") // every kind's series exists before its first refusal
	}
	before := count("InferenceGraph", "CREATE")
	require.NoError(t, create(graphYAML("counted-ok", "", "  nodes:\n    root: {routerType: Sequence, steps: [{serviceName: a}]}\n")))
	assert.Equal(t, before, count("InferenceGraph", "CREATE"), "an admitted create is no refusal")
	require.Error(t, create(graphYAML("counted-bad", "", "  nodes:\n    start: {routerType: Sequence, steps: [{serviceName: a}]}\n")))
	assert.Equal(t, before+1, count("InferenceGraph", "CREATE"))
}
