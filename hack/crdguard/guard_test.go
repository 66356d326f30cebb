package main

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestGuard(t *testing.T) {
	c := guard(reflect.TypeFor[[]corev1.Container]())
	require.NotNil(t, c)
	assert.Equal(t, "array", c.Type)
	item := c.Items.Schema
	assert.True(t, *item.XPreserveUnknownFields, "fields the guard does not type are kept as written")
	var typed []string
	for name := range item.Properties {
		typed = append(typed, name)
	}
	assert.ElementsMatch(t, []string{"livenessProbe", "ports", "readinessProbe", "resizePolicy", "resources", "startupProbe"}, typed,
		"a container is typed only where values most often fail to decode")

	port := item.Properties["ports"].Items.Schema.Properties["containerPort"]
	assert.Equal(t, "integer", port.Type)
	assert.Equal(t, "int32", port.Format)
	cpu := item.Properties["resources"].Properties["requests"].AdditionalProperties.Schema
	assert.Equal(t, quantityPattern, cpu.Pattern)
	assert.True(t, cpu.XIntOrString)
	probePort := item.Properties["readinessProbe"].Properties["httpGet"].Properties["port"]
	assert.True(t, probePort.XIntOrString)
	_, hasPath := item.Properties["readinessProbe"].Properties["httpGet"].Properties["path"]
	assert.False(t, hasPath, "strings stay untyped")

	surge := guard(reflect.TypeFor[*appsv1.DeploymentStrategy]()).Properties["rollingUpdate"].Properties["maxSurge"]
	assert.True(t, surge.XIntOrString)

	assert.Nil(t, guard(reflect.TypeFor[[]corev1.Volume]()), "volumes stay schemaless: the size budget")
	assert.Nil(t, guard(reflect.TypeFor[*corev1.Affinity]()))
}
