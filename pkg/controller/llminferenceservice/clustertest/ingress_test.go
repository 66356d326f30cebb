package clustertest

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestUsersIngressGivesTheURL: router.ingress names the user's Ingress,
// which Serval reads and never changes: missing, the router is not ready
// and says which; there, its hosts are the service's URLs.
func TestUsersIngressGivesTheURL(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createService(t, ns, "llama", `
  model: {uri: hf://facebook/opt-125m}
  router:
    ingress: {refs: [{name: web}]}
`)
	makeAvailable(t, ns, "llama-kserve")
	eventually(t, "the missing Ingress named", func() bool { return condition(t, ns, "llama", "Ready") == "False/IngressNotFound" })
	assert.Contains(t, message(t, ns, "llama", "RouterReady"), "Ingress "+ns+"/web does not exist")

	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: networkingv1.IngressSpec{
		IngressClassName: ptr.To("nginx"),
		TLS:              []networkingv1.IngressTLS{{Hosts: []string{"llm.example.com"}}},
		Rules:            []networkingv1.IngressRule{{Host: "llm.example.com"}, {Host: "llm.internal"}},
	}}
	require.NoError(t, k8s.Create(ctx, ing))
	touch(t, ns, "llama", "ingress created") // Serval does not watch the user's Ingresses
	eventually(t, "Ready", func() bool { return condition(t, ns, "llama", "Ready") == "True/Ready" })
	svc := get(t, ns, "llama")
	assert.Equal(t, "https://llm.example.com", svc.Status.URL)
	urls := []string{}
	for _, a := range svc.Status.Addresses {
		urls = append(urls, a.Name+" "+a.URL)
	}
	assert.Equal(t, []string{"ingress https://llm.example.com", "ingress http://llm.internal"}, urls)
	left := &networkingv1.Ingress{}
	require.True(t, exists(left, ns, "web"))
	assert.Equal(t, ing.Spec, left.Spec, "the user's Ingress is untouched")
	assert.Empty(t, left.OwnerReferences)
}

// TestSchedulerConfigFromUsersConfigMap: config.ref's ConfigMap is mounted
// into the picker, which reads it; the manager never reads it.
func TestSchedulerConfigFromUsersConfigMap(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "llama", `
  model: {uri: hf://facebook/opt-125m}
  router:
    scheduler:
      config: {ref: {name: epp-config, key: picker.yaml}}
`)
	dep := &appsv1.Deployment{}
	eventually(t, "the picker", func() bool { return exists(dep, ns, "llama-kserve-router-scheduler") })
	pod := dep.Spec.Template.Spec
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "epp-config" })
	require.GreaterOrEqual(t, i, 0, "the ConfigMap is a volume of the picker")
	assert.Equal(t, "epp-config", pod.Volumes[i].ConfigMap.Name)
	assert.Equal(t, "picker.yaml", pod.Volumes[i].ConfigMap.Items[0].Key)
	args := pod.Containers[0].Args
	at := slices.Index(args, "--config-file")
	require.GreaterOrEqual(t, at, 0)
	assert.Equal(t, "/etc/serval/epp/config.yaml", args[at+1])
	assert.NotContains(t, args, "--config-text")
}
