package childwatch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/serval-dev/serval/pkg/controller/childwatch"
)

func TestStatusSignalChanged(t *testing.T) {
	signal := func(o client.Object) string { return o.(*appsv1.Deployment).Status.Conditions[0].Reason }
	p := childwatch.StatusSignalChanged(signal)
	base := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 1, Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}},
			Status:     appsv1.DeploymentStatus{Replicas: 1, Conditions: []appsv1.DeploymentCondition{{Reason: "NewReplicaSetCreated"}}},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*appsv1.Deployment)
		want   bool
	}{
		{"a status write Serval does not read", func(d *appsv1.Deployment) { d.Status.Replicas = 2 }, false},
		{"a status change Serval reads", func(d *appsv1.Deployment) { d.Status.Conditions[0].Reason = "ProgressDeadlineExceeded" }, true},
		{"a spec change (drift)", func(d *appsv1.Deployment) { d.Generation = 2 }, true},
		{"a label changed", func(d *appsv1.Deployment) { d.Labels["a"] = "x" }, true},
		{"an annotation added", func(d *appsv1.Deployment) { d.Annotations["c"] = "3" }, true},
		{"no change at all", func(*appsv1.Deployment) {}, false},
		{"an owner added", func(d *appsv1.Deployment) { d.OwnerReferences = []metav1.OwnerReference{{Name: "x"}} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			assert.Equal(t, tc.want, p.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: n}))
		})
	}
	assert.True(t, p.Create(event.CreateEvent{Object: base()}), "creates always pass")
	assert.True(t, p.Delete(event.DeleteEvent{Object: base()}), "deletes always pass")
}
