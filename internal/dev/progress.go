package dev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/registry"
)

// runSample applies config/samples/<name>.yaml and follows its
// InferenceService to Ready, printing each condition change.
func runSample(ctx context.Context, c client.Client, root string, o Options) error {
	name := o.Sample
	if name == "" {
		name = "sklearn"
	}
	path := filepath.Join(root, "config/samples", name+".yaml")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no sample %q: %w (samples are the files in config/samples)", name, err)
	}
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	if err := ApplyFile(ctx, c, path, ""); err != nil {
		return err
	}
	var isvcName string
	for _, obj := range objs {
		if obj.GetKind() == "InferenceService" {
			isvcName = obj.GetName()
		}
	}
	if isvcName == "" {
		return fmt.Errorf("sample %s has no InferenceService", name)
	}
	fmt.Fprintf(o.Out, "\nApplied sample %s: InferenceService default/%s\n", name, isvcName)
	start := time.Now()
	isvc, err := follow(ctx, c, client.ObjectKey{Namespace: "default", Name: isvcName}, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nReady in %s\n  URL: %s\n", time.Since(start).Round(100*time.Millisecond), isvc.Status.URL)
	if rt := isvc.Status.ClusterServingRuntimeName + isvc.Status.ServingRuntimeName; rt != "" {
		fmt.Fprintf(o.Out, "  runtime: %s (protocol %s)\n", rt, isvc.Status.ProtocolVersion)
	}
	return listChildren(ctx, c, isvc, o)
}

// follow prints conditions as they change until Ready or the timeout.
func follow(ctx context.Context, c client.Client, key client.ObjectKey, o Options) (*v1beta1.InferenceService, error) {
	ctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()
	seen := map[string]string{}
	for {
		isvc := &v1beta1.InferenceService{}
		if err := c.Get(ctx, key, isvc); err == nil {
			for _, cond := range isvc.Status.Conditions {
				line := fmt.Sprintf("%s=%s", cond.Type, cond.Status)
				if cond.Status != "True" && cond.Reason != "" {
					line += fmt.Sprintf(" (%s: %s)", cond.Reason, cond.Message)
				}
				if seen[cond.Type] != line {
					seen[cond.Type] = line
					fmt.Fprintf(o.Out, "  %s\n", line)
				}
			}
			if meta.IsStatusConditionTrue(isvc.Status.Conditions, v1beta1.ConditionReady) {
				return isvc, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the InferenceService %s did not become Ready within %s", key.Name, o.ReadyTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// listChildren prints the objects Serval created for the InferenceService:
// every child kind of the registry that the cluster serves, and the pods.
func listChildren(ctx context.Context, c client.Client, isvc *v1beta1.InferenceService, o Options) error {
	sel := client.MatchingLabels{v1beta1.InferenceServiceLabel: isvc.Name}
	in := client.InNamespace(isvc.Namespace)
	var lines []string
	for _, k := range registry.Kinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := c.List(ctx, list, in, sel); meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return err
		}
		for _, item := range list.Items {
			lines = append(lines, k.GVK.Kind+"/"+item.GetName()+describe(&item))
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, in, sel); err != nil {
		return err
	}
	for _, p := range pods.Items {
		lines = append(lines, fmt.Sprintf("Pod/%s (%s on %s)", p.Name, p.Status.Phase, p.Spec.NodeName))
	}
	sort.Strings(lines)
	fmt.Fprintf(o.Out, "  objects created:\n    %s\n", strings.Join(lines, "\n    "))
	return nil
}

// describe is what a line shows of a child beside its name.
func describe(u *unstructured.Unstructured) string {
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	num := func(path ...string) int64 { v, _, _ := unstructured.NestedInt64(u.Object, path...); return v }
	switch u.GetKind() {
	case "Deployment":
		return fmt.Sprintf(" (%d/%d available)", num("status", "availableReplicas"), num("status", "replicas"))
	case "HorizontalPodAutoscaler":
		return fmt.Sprintf(" (%d-%d replicas)", num("spec", "minReplicas"), num("spec", "maxReplicas"))
	case "Ingress":
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		if len(rules) > 0 {
			host, _, _ := unstructured.NestedString(rules[0].(map[string]any), "host")
			return " (host " + host + ")"
		}
	case "VirtualService":
		hosts, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "hosts")
		return " (hosts " + strings.Join(hosts, ", ") + ")"
	case "Service":
		if name := str("spec", "externalName"); name != "" {
			return " (to " + name + ")"
		}
		if url := str("status", "url"); url != "" {
			return " (" + url + ")"
		}
	}
	return ""
}
