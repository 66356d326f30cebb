package clustertest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// initImage is the image of the storage initializer of the Deployment, or "".
func initImage(ns, name string) string {
	d, err := getDeployment(ns, name)
	if err != nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.InitContainers {
		if c.Name == "storage-initializer" {
			return c.Image
		}
	}
	return ""
}

// TestClusterStorageContainer: a URI of a scheme Serval does not know is
// refused until a ClusterStorageContainer supports it; then that container
// downloads it, and the InferenceService follows the container's changes.
func TestClusterStorageContainer(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createClusterRuntime(t, "csc-sklearn", "sklearn-csc")
	createISVC(t, ns, "ms", "sklearn-csc", withPredictor(func(p *v1beta1.PredictorSpec) {
		p.Model.StorageURI = ptr.To("modelscope://qwen/Qwen2.5-0.5B")
	}))
	eventually(t, "the unknown scheme refused", func() bool {
		c := cond(getISVC(t, ns, "ms"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == string(v1beta1.UnsupportedStorageURI) && strings.Contains(c.Message, "or add a ClusterStorageContainer")
	})
	assert.False(t, exists(&appsv1.Deployment{}, ns, "ms-predictor"))

	sc := &v1alpha1.ClusterStorageContainer{ObjectMeta: metav1.ObjectMeta{Name: "test-modelscope"}, Spec: v1alpha1.StorageContainerSpec{
		Container:           corev1.Container{Name: "storage-initializer", Image: "example.com/modelscope:1"},
		SupportedURIFormats: []v1alpha1.SupportedURIFormat{{Prefix: "modelscope://"}}}}
	require.NoError(t, k8s.Create(ctx, sc))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), sc) })
	eventually(t, "the container downloads it", func() bool { return initImage(ns, "ms-predictor") == "example.com/modelscope:1" })

	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: sc.Name}, sc))
	sc.Spec.Container.Image = "example.com/modelscope:2"
	require.NoError(t, k8s.Update(ctx, sc))
	eventually(t, "the container's change followed", func() bool { return initImage(ns, "ms-predictor") == "example.com/modelscope:2" })

	// Named and disabled: said so on the predictor.
	updateISVC(t, ns, "ms", func(i *v1beta1.InferenceService) { i.Spec.Predictor.StorageContainerName = ptr.To("test-modelscope") })
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: sc.Name}, sc))
	sc.Disabled = ptr.To(true)
	require.NoError(t, k8s.Update(ctx, sc))
	eventually(t, "the disabled container named", func() bool {
		c := cond(getISVC(t, ns, "ms"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == string(v1beta1.UnsupportedStorageURI) && c.Message == `the ClusterStorageContainer "test-modelscope" is disabled`
	})
	quiesce(t, ns)
}
