package apply

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestVersionOf(t *testing.T) {
	keys := owned{labels: []string{"a"}, annotations: []string{"mine", HashAnnotation}}
	base := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Generation: 3, ResourceVersion: "100", Labels: map[string]string{"a": "1"},
			Annotations: map[string]string{"mine": "x", HashAnnotation: "h"}}
	}
	v := versionOf(base(), keys)
	status := base()
	status.ResourceVersion = "101" // a status update: same generation and metadata
	assert.Equal(t, v, versionOf(status, keys), "status updates do not change the version")
	spec := base()
	spec.Generation = 4
	assert.NotEqual(t, v, versionOf(spec, keys), "a spec change does")
	labels := base()
	labels.Labels = map[string]string{"a": "2"}
	assert.NotEqual(t, v, versionOf(labels, keys), "a label change does, so drift of Serval's labels is repaired")
	removed := base()
	delete(removed.Annotations, "mine")
	assert.NotEqual(t, v, versionOf(removed, keys), "so does removing Serval's annotation")
	foreign := base()
	foreign.Annotations["deployment.kubernetes.io/revision"] = "2"
	foreign.Labels["team"] = "theirs"
	assert.Equal(t, v, versionOf(foreign, keys), "metadata others add does not count")
	owners := base()
	owners.OwnerReferences = []metav1.OwnerReference{{Name: "x"}}
	assert.NotEqual(t, v, versionOf(owners, keys))
	noGen := &metav1.ObjectMeta{ResourceVersion: "7"}
	assert.Equal(t, "rv:7", versionOf(noGen, keys), "without a generation, the resourceVersion")
}

func TestWithHash(t *testing.T) {
	typed := appsv1ac.Deployment("d", "ns").WithLabels(map[string]string{"a": "1"})
	require.NoError(t, withHash(typed, "h1"))
	assert.Equal(t, "h1", typed.Annotations[HashAnnotation])
	bare := appsv1ac.DeploymentApplyConfiguration{}
	require.NoError(t, withHash(&bare, "h2"), "no metadata yet")
	assert.Equal(t, "h2", bare.Annotations[HashAnnotation])
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "k"}}}
	ac := client.ApplyConfigurationFromUnstructured(u)
	require.NoError(t, withHash(ac, "h3"))
	assert.Equal(t, "h3", u.GetAnnotations()[HashAnnotation])
	assert.Error(t, withHash(struct{}{}, "h"))
}

func TestOwnedOf(t *testing.T) {
	data, err := json.Marshal(appsv1ac.Deployment("d", "ns").WithLabels(map[string]string{"b": "1", "a": "2"}).WithAnnotations(map[string]string{"x": "y"}))
	require.NoError(t, err)
	assert.Equal(t, owned{labels: []string{"a", "b"}, annotations: []string{"x", HashAnnotation}}, ownedOf(data))
}

func TestOwnsField(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	replicas := `{"f:spec":{"f:replicas":{},"f:template":{}}}`
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"applied by the manager", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, replicas)}, true},
		{"another manager", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", metav1.ManagedFieldsOperationApply, replicas)}, false},
		{"an update, not an apply", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationUpdate, replicas)}, false},
		{"another field", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:template":{}}}`)}, false},
		{"malformed", []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationApply, `{`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ownsField(tt.entries, FieldOwner, "f:spec", "f:replicas"))
		})
	}
}
