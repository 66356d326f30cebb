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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
)

// runSample applies config/samples/<name>.yaml and follows its
// InferenceService or LLMInferenceService to Ready, printing each condition
// change. For an LLMInferenceService with a router it plays the Gateway
// implementation the sandbox lacks (sandbox.PlayInferenceGateway).
// sampleName is the sample a dev session runs: sklearn unless named.
func sampleName(name string) string {
	if name == "" {
		return "sklearn"
	}
	return name
}

// checkSample finds a sample's file and the InferenceService or
// LLMInferenceService it runs; it is called before the cluster starts, so
// that a sample that cannot run is refused at once, with those that can.
func checkSample(root, name string) (string, *unstructured.Unstructured, error) {
	name = sampleName(name)
	path := filepath.Join(root, "config/samples", name+".yaml")
	target, err := sampleTarget(path)
	if err == nil && target == nil {
		err = fmt.Errorf("it has no InferenceService or LLMInferenceService to follow")
	}
	if err != nil {
		return "", nil, fmt.Errorf("sample %q cannot run: %w; the samples that run are: %s", name, err, strings.Join(runnableSamples(root), ", "))
	}
	return path, target, nil
}

// sampleTarget is the first InferenceService or LLMInferenceService of a
// sample file, or nil.
func sampleTarget(path string) (*unstructured.Unstructured, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if k := obj.GetKind(); k == "InferenceService" || k == "LLMInferenceService" {
			return obj, nil
		}
	}
	return nil, nil
}

// runnableSamples are the samples that hold a service to follow, by name.
func runnableSamples(root string) []string {
	files, _ := filepath.Glob(filepath.Join(root, "config/samples", "*.yaml"))
	var out []string
	for _, f := range files {
		if t, err := sampleTarget(f); err == nil && t != nil {
			out = append(out, strings.TrimSuffix(filepath.Base(f), ".yaml"))
		}
	}
	return out
}

func runSample(ctx context.Context, sb *sandbox.Sandbox, root string, o Options) error {
	c := sb.Client
	name := sampleName(o.Sample)
	path, target, err := checkSample(root, o.Sample)
	if err != nil {
		return err
	}
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	if err := ApplyFile(ctx, c, path, ""); err != nil {
		return err
	}
	kind := target.GetKind()
	fmt.Fprintf(o.Out, "\nApplied sample %s: %s default/%s\n", name, kind, target.GetName())
	if hasKind(objs, "LocalModelCache") {
		fmt.Fprintln(o.Out, "  (the sandbox runs the node agents in this process and plays their download Jobs: kwok completes them)")
		go sb.PlayNodeAgents(ctx, filepath.Join(sb.Dir, "node-disks"), ManagerNamespace)
	}
	if kind == "LLMInferenceService" {
		playGateway(ctx, sb, target, o)
		if multiNode(target) {
			fmt.Fprintln(o.Out, "  (the sandbox plays the LeaderWorkerSet controller: it makes each group's StatefulSets and reports them available)")
			go sb.PlayLeaderWorkerSets(ctx, "default")
		}
	}
	start := time.Now()
	live, err := follow(ctx, c, target, o)
	if err != nil {
		return err
	}
	url, _, _ := unstructured.NestedString(live.Object, "status", "url")
	fmt.Fprintf(o.Out, "\nReady in %s\n  URL: %s\n", time.Since(start).Round(100*time.Millisecond), url)
	if kind == "InferenceService" {
		rt := str(live, "status", "clusterServingRuntimeName") + str(live, "status", "servingRuntimeName")
		if rt != "" {
			fmt.Fprintf(o.Out, "  runtime: %s (protocol %s)\n", rt, str(live, "status", "protocolVersion"))
		}
		if cache := str(live, "status", "components", "predictor", "modelCache", "name"); cache != "" {
			fmt.Fprintf(o.Out, "  model: mounted from %s %s (node group %s)\n", str(live, "status", "components", "predictor", "modelCache", "kind"),
				cache, str(live, "status", "components", "predictor", "modelCache", "nodeGroup"))
		}
		return listChildren(ctx, c, live.GetNamespace(), client.MatchingLabels{v1beta1.InferenceServiceLabel: live.GetName()}, o)
	}
	return listChildren(ctx, c, live.GetNamespace(), client.MatchingLabels{v1alpha2.LLMInferenceServiceLabel: live.GetName()}, o)
}

// hasKind reports whether one of objs is of kind.
func hasKind(objs []*unstructured.Unstructured, kind string) bool {
	for _, o := range objs {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

// multiNode reports whether an LLMInferenceService runs a workload across
// nodes (a worker, of the main or the prefill workload).
func multiNode(svc *unstructured.Unstructured) bool {
	_, main, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "worker")
	_, prefill, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "prefill", "worker")
	return main || prefill
}

func str(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

// playGateway accepts an LLM sample's InferencePool and route in the
// background, as a Gateway implementation would, on the default Gateway
// of serval-config.
func playGateway(ctx context.Context, sb *sandbox.Sandbox, svc *unstructured.Unstructured, o Options) {
	router, found, _ := unstructured.NestedMap(svc.Object, "spec", "router")
	if !found {
		return
	}
	pool, route := "", ""
	if _, ok := router["scheduler"]; ok {
		pool = svc.GetName() + "-inference-pool"
	}
	if _, ok := router["route"]; ok {
		route = svc.GetName() + "-kserve-route"
	}
	gateway := types.NamespacedName{Namespace: ManagerNamespace, Name: "serval-ingress-gateway"}
	fmt.Fprintf(o.Out, "  (the sandbox plays the Gateway %s: it accepts the InferencePool and the route)\n", gateway)
	go func() {
		if err := sb.PlayInferenceGateway(ctx, gateway, "default", pool, route, o.ReadyTimeout); err != nil && ctx.Err() == nil {
			fmt.Fprintln(o.Out, "  playing the Gateway:", err)
		}
	}()
}

// follow prints the object's conditions as they change until Ready or the
// timeout, and returns it.
func follow(ctx context.Context, c client.Client, target *unstructured.Unstructured, o Options) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()
	key := client.ObjectKey{Namespace: "default", Name: target.GetName()}
	seen := map[string]string{}
	for {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(target.GroupVersionKind())
		if err := c.Get(ctx, key, live); err == nil {
			ready := false
			conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
			for _, item := range conds {
				cond, _ := item.(map[string]any)
				typ, status := fmt.Sprint(cond["type"]), fmt.Sprint(cond["status"])
				line := fmt.Sprintf("%s=%s", typ, status)
				if status != "True" && cond["reason"] != nil {
					line += fmt.Sprintf(" (%v: %v)", cond["reason"], cond["message"])
				}
				if seen[typ] != line {
					seen[typ] = line
					fmt.Fprintf(o.Out, "  %s\n", line)
				}
				ready = ready || (typ == "Ready" && status == "True")
			}
			if ready {
				return live, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the %s %s did not become Ready within %s", target.GetKind(), key.Name, o.ReadyTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// listChildren prints the objects Serval created for a service, selected by
// its owner label: every child kind of the registry that the cluster serves,
// and the pods.
func listChildren(ctx context.Context, c client.Client, namespace string, sel client.MatchingLabels, o Options) error {
	in := client.InNamespace(namespace)
	var lines []string
	for _, k := range childkinds.All() {
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
