package llmobjects

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// The serving certificate's Secret is applied and read by name, never
// listed or watched: the manager holds no right to list Secrets. Create
// cannot be limited by name; the apply step never writes a Secret that
// another owner controls.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch

// SecretKind is the serving certificate's kind. It is not in Kinds: never
// cached, listed or pruned (the owner reference deletes it with the
// service).
var SecretKind = corev1.SchemeGroupVersion.WithKind("Secret")

// CertificateName is the serving certificate's Secret, KServe's name: the
// presets mount it by this name.
func CertificateName(svc string) string { return kmeta.ChildName(svc, "-kserve-self-signed-certs") }

// CertificateKey is the serving certificate's Secret of the service.
func CertificateKey(in Inputs) types.NamespacedName {
	return types.NamespacedName{Namespace: in.Service.Namespace, Name: CertificateName(in.Service.Name)}
}

// CertificateNames are the DNS names the serving certificate covers: the
// workload Service's and, when Serval runs them, the endpoint picker's and
// the standalone tokenizer's, each
// as {name}.{namespace}.svc and with the cluster domain.
func CertificateNames(in Inputs) []string {
	services := []string{presets.WorkloadServiceName(in.Service.Name)}
	if HasScheduler(in.Spec) {
		picker := presets.EPPServiceName(in.Service.Name)
		if p := in.Spec.Router.Scheduler.Pool; p != nil && p.Spec != nil && p.Spec.EndpointPickerRef != nil && p.Spec.EndpointPickerRef.Name != "" {
			picker = string(p.Spec.EndpointPickerRef.Name)
		}
		services = append(services, picker)
		if HasTokenizer(in.Spec) {
			services = append(services, TokenizerName(in.Service.Name))
		}
	}
	var names []string
	for _, s := range services {
		host := fmt.Sprintf("%s.%s.svc", s, in.Service.Namespace)
		names = append(names, host, host+".cluster.local")
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// CertificateObject is the Secret of the serving certificate b: a
// kubernetes.io/tls Secret whose certificate is also its CA (ca.crt), as
// KServe's. It is made whether or not TLS is on, as KServe makes it, so that
// a template that mounts it always finds it.
func CertificateObject(in Inputs, b servingcert.Bundle) apply.Object {
	svc := in.Service
	key := CertificateKey(in)
	return apply.Object{GVK: SecretKind, Key: key, Spec: corev1ac.Secret(key.Name, key.Namespace).
		WithLabels(commonLabels(svc, Workload)).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithType(corev1.SecretTypeTLS).
		WithData(map[string][]byte{corev1.TLSPrivateKeyKey: b.Key, corev1.TLSCertKey: b.Cert, "ca.crt": b.Cert})}
}
