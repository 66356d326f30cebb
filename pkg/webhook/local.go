package webhook

import (
	"bytes"
	"context"
	"fmt"
	"os"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The names of Serval's webhook configurations; the certificate manager
// injects its CA into these.
const (
	MutatingConfigName   = "serval-mutating-webhook-configuration"
	ValidatingConfigName = "serval-validating-webhook-configuration"
)

// LocalConfigurations reads the generated config/webhook manifests and points
// every webhook at baseURL (https://127.0.0.1:PORT) instead of a Service: a
// manager running outside the cluster (serval dev, the tests) cannot be
// reached through a Service, since no kube-proxy runs there.
func LocalConfigurations(manifests, baseURL string) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(manifests)
	if err != nil {
		return nil, nil, err
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for _, obj := range []any{mutating, validating} {
		if err := dec.Decode(obj); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", manifests, err)
		}
	}
	mutating.Name, validating.Name = MutatingConfigName, ValidatingConfigName
	for i := range mutating.Webhooks {
		toURL(&mutating.Webhooks[i].ClientConfig, baseURL)
	}
	for i := range validating.Webhooks {
		toURL(&validating.Webhooks[i].ClientConfig, baseURL)
	}
	return mutating, validating, nil
}

func toURL(cc *admissionregistrationv1.WebhookClientConfig, baseURL string) {
	url := baseURL + *cc.Service.Path
	cc.URL, cc.Service = &url, nil
}

// InstallLocal creates (or replaces) the local webhook configurations.
func InstallLocal(ctx context.Context, c client.Client, manifests, baseURL string) error {
	mutating, validating, err := LocalConfigurations(manifests, baseURL)
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{mutating, validating} {
		err := c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			existing := obj.DeepCopyObject().(client.Object)
			if err = c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err == nil {
				obj.SetResourceVersion(existing.GetResourceVersion())
				err = c.Update(ctx, obj)
			}
		}
		if err != nil {
			return fmt.Errorf("install webhook configuration %s: %w", obj.GetName(), err)
		}
	}
	return nil
}
