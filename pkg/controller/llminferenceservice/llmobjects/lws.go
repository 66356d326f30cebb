package llmobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// +kubebuilder:rbac:groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=get;list;watch;create;update;patch;delete

// LeaderWorkerSetKind is the LeaderWorkerSet a workload runs across nodes
// with, built and read as Unstructured: the LeaderWorkerSet module pins an
// older controller-runtime than Serval's.
var LeaderWorkerSetKind = kinds.Kind{
	GVK:          schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"},
	CRD:          "leaderworkersets.leaderworkerset.x-k8s.io",
	Install:      "install LeaderWorkerSet (https://lws.sigs.k8s.io/docs/installation/), v0.8 or later",
	StatusSignal: lwsSignal,
}

// MakeLeaderWorkerSet is a part's LeaderWorkerSet, as KServe makes it: a
// group of parallelism's size per replica, the leader running the part's
// template and the others its worker; a failed pod restarts its group;
// the workers start once the leader is created; rolling updates bounded by
// rolloutStrategy; a data-parallel prefill group is one subgroup.
func MakeLeaderWorkerSet(in Inputs, w *PartWorkload) (*unstructured.Unstructured, error) {
	svc := in.Service
	p := w.Part
	lwt := map[string]any{
		"size":          int64(p.Spec.Parallelism.Size()),
		"restartPolicy": "RecreateGroupOnPodRestart",
	}
	if p.Prefill && p.Spec.Parallelism.IsDataParallel() {
		// KServe's rule for prefill across nodes: one subgroup of the
		// whole group, so that LeaderWorkerSet places and restarts the
		// data-parallel ranks together.
		lwt["subGroupPolicy"] = map[string]any{"subGroupSize": int64(p.Spec.Parallelism.Size())}
	}
	worker, err := podTemplateMap(w.Worker)
	if err != nil {
		return nil, err
	}
	lwt["workerTemplate"] = worker
	if w.Leader != nil {
		leader, err := podTemplateMap(w.Leader)
		if err != nil {
			return nil, err
		}
		lwt["leaderTemplate"] = leader
	}
	spec := map[string]any{"leaderWorkerTemplate": lwt, "startupPolicy": "LeaderCreated"}
	rollout := map[string]any{"type": "RollingUpdate"}
	if ru := lwsRollingUpdate(p.Spec.RolloutStrategy); ru != nil {
		rollout["rollingUpdateConfiguration"] = ru
	}
	spec["rolloutStrategy"] = rollout
	if serving := w.Serving(); !serving.Autoscaled {
		spec["replicas"] = int64(serving.Replicas)
	}
	// The cache holds the children that carry the component label; the
	// service's propagated labels and annotations go on it, as on its pods.
	labels := p.workerLabels(svc)
	labels[v1beta1.ComponentLabel] = string(p.Component())
	annotations := map[string]string{}
	addServiceMetadata(labels, annotations, svc.Labels, svc.Annotations, leaderWorkerSetAnnotationPrefixes)
	metadata := map[string]any{
		"name": p.Name(svc.Name), "namespace": svc.Namespace, "labels": workload.UnstructuredStrings(labels),
		"ownerReferences": []any{owner.OfLLM(svc).Unstructured()},
	}
	if len(annotations) > 0 {
		metadata["annotations"] = workload.UnstructuredStrings(annotations)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": LeaderWorkerSetKind.GVK.GroupVersion().String(),
		"kind":       LeaderWorkerSetKind.GVK.Kind,
		"metadata":   metadata,
		"spec":       spec,
	}}, nil
}

// podTemplateMap is a component's pod template as Unstructured holds it,
// converted as a Deployment's is (standard.PodTemplateOf), with no default
// probe: a worker that serves nothing has no port to probe.
func podTemplateMap(c *components.Component) (map[string]any, error) {
	var annotations map[string]string
	if len(c.Annotations) > 0 {
		annotations = c.Annotations
	}
	tmpl, err := standard.PodTemplateOf(c.Name, c.Pod, c.Labels, annotations, 0)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(tmpl)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(data, &out)
}

// ObserveLeaderWorkerSet reads a LeaderWorkerSet's readiness, KServe's
// rule: its Available condition; until it reports one, progressing. The
// first failing pod of the part says why it is not available.
func ObserveLeaderWorkerSet(ctx context.Context, r client.Reader, w *PartWorkload, ns string) (workload.State, error) {
	name := w.Part.Name(w.Serving().Owner.Name)
	lws := LeaderWorkerSetKind.New().(*unstructured.Unstructured)
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lws)
	if apierrors.IsNotFound(err) {
		return workload.State{NotAvailableMessage: "LeaderWorkerSet " + name + " does not exist yet"}, nil
	}
	if err != nil {
		return workload.State{}, fmt.Errorf("get LeaderWorkerSet %s: %w", name, err)
	}
	st := workload.State{}
	status, _, _ := unstructured.NestedMap(lws.Object, "status")
	st.Available, st.NotAvailableMessage = workload.UnstructuredCondition(status, "Available", "the LeaderWorkerSet controller")
	st.RolledOut = st.Available
	for _, sel := range []map[string]string{w.Pods, w.WorkerPods} {
		if sel == nil || st.Problem != nil {
			continue
		}
		pods, err := workload.ListPods(ctx, r, &components.Component{PodSet: components.PodSet{Selector: sel}, Owner: w.Serving().Owner, OwnerLabel: w.Serving().OwnerLabel})
		if err != nil {
			return workload.State{}, fmt.Errorf("list pods of %s: %w", name, err)
		}
		st.Problem = workload.FirstPodProblem(pods)
		st.Loading = st.Loading || workload.PodsLoading(pods)
	}
	return st, nil
}

// lwsSignal is LeaderWorkerSetKind's StatusSignal: its Available
// condition and ready replicas.
func lwsSignal(obj client.Object) string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	ready, msg := workload.UnstructuredCondition(status, "Available", "")
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	return strconv.FormatBool(ready) + "/" + msg + "/" + strconv.FormatInt(n, 10)
}
