package clustertest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestCABundle: serval-config names a CA bundle ConfigMap; it is copied
// into the InferenceService's namespace as global-ca-bundle, mounted into
// the storage initializer, and followed when it changes. Until it exists,
// the predictor says so.
func TestCABundle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	setConfig(t, map[string]string{"storageInitializer.caBundleConfigMapName": "private-ca"})
	createClusterRuntime(t, "ca-sklearn", "sklearn-ca")
	createISVC(t, ns, "ca", "sklearn-ca")
	eventually(t, "the missing bundle reported", func() bool {
		c := cond(getISVC(t, ns, "ca"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Reason == v1beta1.ReasonInvalidConfig && strings.Contains(c.Message, "names the ConfigMap "+managerNamespace+"/private-ca, which does not exist")
	})

	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "private-ca", Namespace: managerNamespace},
		Data: map[string]string{"cabundle.crt": "-----BEGIN CERTIFICATE-----\none\n-----END CERTIFICATE-----\n"}}
	require.NoError(t, k8s.Create(ctx, source))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), source) })
	copyOf := func() string {
		cm := &corev1.ConfigMap{}
		if k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "global-ca-bundle"}, cm) != nil {
			return ""
		}
		return cm.Data["cabundle.crt"]
	}
	eventually(t, "the copy in the namespace", func() bool { return strings.Contains(copyOf(), "one") })
	eventually(t, "the bundle mounted into the initializer", func() bool {
		d, err := getDeployment(ns, "ca-predictor")
		if err != nil {
			return false
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			for _, m := range c.VolumeMounts {
				if m.Name == "cabundle-cert" && m.MountPath == "/etc/ssl/custom-certs" {
					return true
				}
			}
		}
		return false
	})

	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Namespace: managerNamespace, Name: "private-ca"}, source))
	source.Data["cabundle.crt"] = "-----BEGIN CERTIFICATE-----\ntwo\n-----END CERTIFICATE-----\n"
	require.NoError(t, k8s.Update(ctx, source))
	eventually(t, "the copy follows", func() bool { return strings.Contains(copyOf(), "two") })
	quiesce(t, ns)
}
