package components

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// mergeRuntimePod merges the runtime's pod-level fields into the pod: the
// InferenceService's values win; lists are joined.
func mergeRuntimePod(pod *corev1.PodSpec, rt *v1alpha1.ServingRuntimePodSpec) {
	if len(rt.NodeSelector) > 0 {
		merged := maps.Clone(rt.NodeSelector)
		maps.Copy(merged, pod.NodeSelector)
		pod.NodeSelector = merged
	}
	pod.Tolerations = append(append([]corev1.Toleration(nil), rt.Tolerations...), pod.Tolerations...)
	if pod.Affinity == nil && rt.Affinity != nil {
		pod.Affinity = rt.Affinity.DeepCopy()
	}
	for _, v := range rt.Volumes {
		pod.Volumes = append(pod.Volumes, *v.DeepCopy())
	}
	seen := map[string]bool{}
	for _, s := range pod.ImagePullSecrets {
		seen[s.Name] = true
	}
	for _, s := range rt.ImagePullSecrets {
		if !seen[s.Name] {
			pod.ImagePullSecrets = append(pod.ImagePullSecrets, s)
		}
	}
	if pod.SchedulerName == "" {
		pod.SchedulerName = rt.SchedulerName
	}
	pod.HostIPC = pod.HostIPC || rt.HostIPC
}

// withTag replaces the tag of an image reference; an image pinned by digest is
// left alone, since a tag would not change what runs.
func withTag(image, tag string) string {
	if strings.Contains(image, "@") {
		return image
	}
	repo := image
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo = image[:i]
	}
	return repo + ":" + tag
}

// renderPlaceholders renders {{.Name}}, {{.Namespace}}, {{.Labels.x}} and
// {{.Annotations.x}} in every container's command, args and env values,
// each within limits.
func renderPlaceholders(pod *corev1.PodSpec, isvc *v1beta1.InferenceService, limits strtemplate.Limits) error {
	data := PlaceholderData(isvc.Name, isvc.Namespace, isvc.Labels, isvc.Annotations)
	for i := range pod.Containers {
		c := &pod.Containers[i]
		for _, list := range []struct {
			field  string
			values []string
		}{{"command", c.Command}, {"args", c.Args}} {
			for j, v := range list.values {
				out, err := RenderPlaceholder(v, data, limits)
				if err != nil {
					return fmt.Errorf("container %s %s[%d]: %w", c.Name, list.field, j, err)
				}
				list.values[j] = out
			}
		}
		for j := range c.Env {
			out, err := RenderPlaceholder(c.Env[j].Value, data, limits)
			if err != nil {
				return fmt.Errorf("container %s env %s: %w", c.Name, c.Env[j].Name, err)
			}
			c.Env[j].Value = out
		}
	}
	return nil
}

// PlaceholderData is what a runtime's placeholders read of the
// InferenceService.
func PlaceholderData(name, namespace string, labels, annotations map[string]string) strtemplate.Data {
	return strtemplate.Data{"Name": name, "Namespace": namespace, "Labels": labels, "Annotations": annotations}
}

// RenderPlaceholder renders one runtime string over data as the model
// server's pod gets it; admission renders with it too, so that what it
// admits renders here within the same limits.
func RenderPlaceholder(s string, data strtemplate.Data, limits strtemplate.Limits) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := strtemplate.Parse("", s)
	if err != nil {
		return "", fmt.Errorf("placeholder in %.80q does not parse (%v); for keys with dashes or dots write {{index .Annotations \"key\"}}", s, err)
	}
	// As KServe renders them (text/template, no missingkey option): a
	// label or annotation the InferenceService lacks is "<no value>".
	out, err := t.WithLimits(limits).ExecuteNoValue(data)
	var limit *strtemplate.LimitError
	if errors.As(err, &limit) {
		return "", fmt.Errorf("placeholder in %.80q: %w", s, err)
	}
	if err != nil {
		return "", fmt.Errorf("placeholder in %.80q does not render (%v): use {{.Name}}, {{.Namespace}}, {{.Labels.key}} or {{.Annotations.key}}", s, err)
	}
	return out, nil
}
