package components_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
)

// TestSetAutoscaler: the one replica rule. Without an autoscaler the
// workload carries minReplicas, 1 when unset; with one, it carries none and
// minReplicas is the autoscaler's floor (0 only when asked for).
func TestSetAutoscaler(t *testing.T) {
	tests := []struct {
		name       string
		class      v1beta1.AutoscalerClass
		min        *int32
		replicas   int32
		autoscaled bool
	}{
		{"none, unset", v1beta1.AutoscalerNone, nil, 1, false},
		{"none, three", v1beta1.AutoscalerNone, ptr.To[int32](3), 3, false},
		{"hpa, unset", v1beta1.AutoscalerHPA, nil, 1, true},
		{"keda to zero", v1beta1.AutoscalerKEDA, ptr.To[int32](0), 0, true},
		{"external (an LLM's scaling)", v1beta1.AutoscalerExternal, ptr.To[int32](2), 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &components.Component{Extension: v1beta1.ComponentExtensionSpec{MinReplicas: tt.min}}
			c.SetAutoscaler(tt.class)
			assert.Equal(t, tt.class, c.AutoscalerClass)
			assert.Equal(t, tt.replicas, c.Replicas)
			assert.Equal(t, tt.autoscaled, c.Autoscaled)
		})
	}
	// A canary runs fixed replicas whatever the service's class.
	c := &components.Component{Extension: v1beta1.ComponentExtensionSpec{MinReplicas: ptr.To[int32](2)}}
	c.SetAutoscaler(v1beta1.AutoscalerHPA)
	c.SetAutoscaler(v1beta1.AutoscalerNone)
	assert.False(t, c.Autoscaled)
	assert.Equal(t, int32(2), c.Replicas)
}
