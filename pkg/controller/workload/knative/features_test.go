package knative

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

func TestRefuse(t *testing.T) {
	pod := func(change func(*corev1.PodSpec)) *components.Component {
		c := &components.Component{Type: "predictor", PodSet: components.PodSet{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container"}}}}}
		change(&c.Pod)
		return c
	}
	initContainer := func(p *corev1.PodSpec) {
		p.InitContainers = []corev1.Container{{Name: "storage-initializer"}}
		p.Volumes = []corev1.Volume{{Name: "kserve-provision-location", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	tests := []struct {
		name     string
		features map[string]string
		pod      func(*corev1.PodSpec)
		want     []string
	}{
		{"a plain pod", nil, func(*corev1.PodSpec) {}, nil},
		{"the storage initializer, by Knative's defaults", nil, initContainer,
			[]string{"init containers storage-initializer needs kubernetes.podspec-init-containers: enabled"}},
		{"the storage initializer, enabled", map[string]string{"kubernetes.podspec-init-containers": "enabled"}, initContainer, nil},
		{"init containers need enabled, allowed is not enough", map[string]string{"kubernetes.podspec-init-containers": "allowed"}, initContainer,
			[]string{"init containers storage-initializer needs kubernetes.podspec-init-containers: enabled"}},
		{"emptyDir turned off", map[string]string{"kubernetes.podspec-init-containers": "enabled", "kubernetes.podspec-volumes-emptydir": "disabled"},
			initContainer, []string{"an emptyDir volume (kserve-provision-location) needs kubernetes.podspec-volumes-emptydir: enabled"}},
		{"a read-only PVC", map[string]string{"kubernetes.podspec-persistent-volume-claim": "enabled"}, func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c", ReadOnly: true}}}}
		}, nil},
		{"a PVC, by default", nil, func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "m", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c", ReadOnly: true}}}}
		}, []string{"a PersistentVolumeClaim volume (m) needs kubernetes.podspec-persistent-volume-claim: enabled"}},
		{"scheduling fields", nil, func(p *corev1.PodSpec) {
			p.NodeSelector = map[string]string{"gpu": "a100"}
			p.Tolerations = []corev1.Toleration{{Key: "gpu"}}
			p.Affinity = &corev1.Affinity{}
		}, []string{"nodeSelector needs kubernetes.podspec-nodeselector: enabled", "affinity needs kubernetes.podspec-affinity: enabled",
			"tolerations needs kubernetes.podspec-tolerations: enabled"}},
		{"allowed is enough for pod fields", map[string]string{"kubernetes.podspec-nodeselector": "allowed"}, func(p *corev1.PodSpec) {
			p.NodeSelector = map[string]string{"gpu": "a100"}
		}, nil},
		{"a pod securityContext beyond seccomp", nil, func(p *corev1.PodSpec) {
			p.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
		}, []string{"a pod securityContext needs kubernetes.podspec-securitycontext: enabled"}},
		{"seccomp alone is fine", nil, func(p *corev1.PodSpec) {
			p.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		}, nil},
		{"fieldRef env", nil, func(p *corev1.PodSpec) {
			p.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
		}, []string{"env NODE of container kserve-container (fieldRef) needs kubernetes.podspec-fieldref: enabled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFeatures(tt.features)
			require.NoError(t, err)
			got := Mode{}.Refuse(pod(tt.pod), workload.Cluster{KnativeFeatures: f, KnativeFeaturesSource: "knative-serving/config-features"})
			if tt.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, workload.Refusal{Reason: "KnativeFeatureDisabled", Message: "Knative would reject the predictor's pod as ConfigMap " +
				"knative-serving/config-features stands: " + strings.Join(tt.want, "; ")}, *got)
		})
	}
}
