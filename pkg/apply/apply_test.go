package apply

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVersionOf(t *testing.T) {
	base := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Generation: 3, ResourceVersion: "100", Labels: map[string]string{"a": "1"}}
	}
	v := versionOf(base())

	status := base()
	status.ResourceVersion = "101" // a status update: same generation and metadata
	assert.Equal(t, v, versionOf(status), "status updates do not change the version")

	spec := base()
	spec.Generation = 4
	assert.NotEqual(t, v, versionOf(spec), "a spec change does")

	labels := base()
	labels.Labels = map[string]string{"a": "2"}
	assert.NotEqual(t, v, versionOf(labels), "a label change does, so drift of Serval's labels is repaired")

	owners := base()
	owners.OwnerReferences = []metav1.OwnerReference{{Name: "x"}}
	assert.NotEqual(t, v, versionOf(owners))

	noGen := &metav1.ObjectMeta{ResourceVersion: "7"}
	assert.Equal(t, "rv:7", versionOf(noGen), "without a generation, the resourceVersion")
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
