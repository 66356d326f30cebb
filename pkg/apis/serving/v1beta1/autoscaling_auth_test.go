package v1beta1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestExternalAuthenticationShapes: KServe's {authenticationRef: {name},
// authModes} decodes, so does the short {name}; anything else is refused
// with the shape to use.
func TestExternalAuthenticationShapes(t *testing.T) {
	decode := func(auth string) (*AutoScalingSpec, error) {
		raw := `{"metrics":[{"type":"External","external":{"metric":{"serverAddress":"http://prom:9090","query":"q"},` +
			`"target":{"type":"Value","value":"2"},"authenticationRef":` + auth + `}}]}`
		return AutoScalingOf(&ComponentExtensionSpec{AutoScaling: &apiextensionsv1.JSON{Raw: []byte(raw)}})
	}
	spec, err := decode(`{"authenticationRef":{"name":"prom-auth"},"authModes":"bearer"}`)
	require.NoError(t, err)
	assert.Equal(t, &ExtMetricAuthentication{AuthenticationRef: AuthenticationRef{Name: "prom-auth"}, AuthModes: "bearer"}, spec.Metrics[0].External.Authentication)

	spec, err = decode(`{"name":"prom-auth"}`)
	require.NoError(t, err)
	assert.Equal(t, "prom-auth", spec.Metrics[0].External.Authentication.AuthenticationRef.Name)

	_, err = decode(`{"secret":"prom-auth"}`)
	assert.ErrorContains(t, err, "authenticationRef is {authenticationRef: {name: <TriggerAuthentication>}, authModes: <bearer|basic|tls>}, as in KServe")
}
