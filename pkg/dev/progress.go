package dev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
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

// listChildren prints the objects Serval created for the InferenceService.
func listChildren(ctx context.Context, c client.Client, isvc *v1beta1.InferenceService, o Options) error {
	sel := client.MatchingLabels{v1beta1.InferenceServiceLabel: isvc.Name}
	in := client.InNamespace(isvc.Namespace)
	var lines []string
	deps := &appsv1.DeploymentList{}
	svcs := &corev1.ServiceList{}
	hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
	pods := &corev1.PodList{}
	ings := &networkingv1.IngressList{}
	for _, l := range []client.ObjectList{deps, svcs, hpas, pods, ings} {
		if err := c.List(ctx, l, in, sel); err != nil {
			return err
		}
	}
	for _, d := range deps.Items {
		lines = append(lines, fmt.Sprintf("Deployment/%s (%d/%d available)", d.Name, d.Status.AvailableReplicas, d.Status.Replicas))
	}
	for _, s := range svcs.Items {
		lines = append(lines, "Service/"+s.Name)
	}
	for _, h := range hpas.Items {
		lines = append(lines, fmt.Sprintf("HorizontalPodAutoscaler/%s (%d-%d replicas)", h.Name, *h.Spec.MinReplicas, h.Spec.MaxReplicas))
	}
	for _, i := range ings.Items {
		lines = append(lines, fmt.Sprintf("Ingress/%s (host %s)", i.Name, i.Spec.Rules[0].Host))
	}
	for _, p := range pods.Items {
		lines = append(lines, fmt.Sprintf("Pod/%s (%s on %s)", p.Name, p.Status.Phase, p.Spec.NodeName))
	}
	sort.Strings(lines)
	fmt.Fprintf(o.Out, "  objects created:\n    %s\n", strings.Join(lines, "\n    "))
	return nil
}
