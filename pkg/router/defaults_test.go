package router_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/router"
)

// TestDefaultsMatchServalConfig: serval-config's router defaults, which the
// controller passes as flags, and the router's own flag defaults are the
// same figures, so a router run by hand behaves as one in a cluster.
func TestDefaultsMatchServalConfig(t *testing.T) {
	l := config.Default().Router.Limits
	assert.Equal(t, int64(router.DefaultMaxHeaderBytes), l.MaxHeaderBytes)
	assert.Equal(t, int64(router.DefaultMaxRequestBodyBytes), l.MaxRequestBodyBytes)
	assert.Equal(t, int64(router.DefaultMaxResponseBodyBytes), l.MaxResponseBodyBytes)
	assert.Equal(t, router.DefaultReadHeaderTimeout, l.ReadHeaderTimeout)
	assert.Equal(t, router.DefaultReadTimeout, l.ReadTimeout)
	assert.Equal(t, router.DefaultWriteTimeout, l.WriteTimeout)
	assert.Equal(t, router.DefaultIdleTimeout, l.IdleTimeout)
	assert.Equal(t, router.DefaultStepTimeout, l.StepTimeout)
	assert.Equal(t, router.DefaultDialTimeout, l.StepDialTimeout)
	assert.Equal(t, router.DefaultMaxIdleConnsPerStep, l.MaxIdleConnsPerStep)
	assert.Equal(t, router.DefaultMaxDepth, v1alpha1.DefaultGraphLimits.MaxDepth)
	assert.Equal(t, router.DefaultMaxStepCalls, v1alpha1.DefaultGraphLimits.MaxStepCalls)
}
