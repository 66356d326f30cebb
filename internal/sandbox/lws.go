package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lwsGVK is LeaderWorkerSet's kind.
var lwsGVK = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}

// The labels the LeaderWorkerSet controller puts on its pods.
const (
	lwsNameLabel   = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupLabel  = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerLabel = "leaderworkerset.sigs.k8s.io/worker-index"
)

// PlayLeaderWorkerSets stands in for the LeaderWorkerSet controller, which
// the sandbox does not run, until ctx ends: for each LeaderWorkerSet of ns
// it makes what the controller makes, a StatefulSet of leaders and one of
// workers per group (the kube-controller-manager makes their pods, kwok
// runs them), with the pod names and the LWS_LEADER_ADDRESS,
// LWS_GROUP_SIZE and LWS_WORKER_INDEX environment the controller gives, and
// writes Available once every group's pods are ready.
func (s *Sandbox) PlayLeaderWorkerSets(ctx context.Context, ns string) {
	for ctx.Err() == nil {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(lwsGVK.GroupVersion().WithKind("LeaderWorkerSetList"))
		if err := s.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				if err := s.playLWS(ctx, &list.Items[i]); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) {
					s.progress("playing LeaderWorkerSet %s: %v", list.Items[i].GetName(), err)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// playLWS brings one LeaderWorkerSet's StatefulSets and status in line.
func (s *Sandbox) playLWS(ctx context.Context, lws *unstructured.Unstructured) error {
	name, ns := lws.GetName(), lws.GetNamespace()
	replicas, found, _ := unstructured.NestedInt64(lws.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	size, found, _ := unstructured.NestedInt64(lws.Object, "spec", "leaderWorkerTemplate", "size")
	if !found {
		size = 1
	}
	worker, err := podTemplate(lws, "workerTemplate")
	if err != nil {
		return err
	}
	leader, err := podTemplate(lws, "leaderTemplate")
	if err != nil {
		return err
	}
	if leader == nil {
		leader = worker.DeepCopy()
	}
	owner := metav1.NewControllerRef(lws, lwsGVK)
	groupSize := corev1.EnvVar{Name: "LWS_GROUP_SIZE", Value: strconv.FormatInt(size, 10)}
	// The leaders are {name}-{group}, reached through the Service {name};
	// each group's workers are {name}-{group}-{index}, from 1.
	leaderEnv := []corev1.EnvVar{
		{Name: "LWS_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "LWS_LEADER_ADDRESS", Value: "$(LWS_POD_NAME)." + name + "." + ns}, groupSize, {Name: "LWS_WORKER_INDEX", Value: "0"},
	}
	ready := true
	want := []*appsv1.StatefulSet{statefulSet(name, ns, owner, int32(replicas), 0, leader, map[string]string{lwsNameLabel: name, lwsWorkerLabel: "0"}, leaderEnv)}
	if size > 1 {
		for g := range replicas {
			group := fmt.Sprintf("%s-%d", name, g)
			workerEnv := []corev1.EnvVar{{Name: "LWS_LEADER_ADDRESS", Value: group + "." + name + "." + ns}, groupSize,
				{Name: "LWS_WORKER_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + appsv1.PodIndexLabel + "']"}}}}
			want = append(want, statefulSet(group, ns, owner, int32(size-1), 1, worker,
				map[string]string{lwsNameLabel: name, lwsGroupLabel: strconv.FormatInt(g, 10)}, workerEnv))
		}
	}
	for _, sts := range want {
		live := &appsv1.StatefulSet{}
		err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: sts.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			if err := s.Client.Create(ctx, sts); err != nil {
				return err
			}
			ready = false
			continue
		case err != nil:
			return err
		}
		if ptr.Deref(live.Spec.Replicas, 1) != *sts.Spec.Replicas {
			live.Spec.Replicas = sts.Spec.Replicas
			if err := s.Client.Update(ctx, live); err != nil {
				return err
			}
		}
		ready = ready && live.Status.ReadyReplicas == *sts.Spec.Replicas
	}
	status, reason := "False", "GroupsProgressing"
	if ready {
		status, reason = "True", "AllGroupsReady"
	}
	current, _, _ := unstructured.NestedSlice(lws.Object, "status", "conditions")
	if len(current) == 1 && current[0].(map[string]any)["status"] == status {
		return nil
	}
	readyReplicas := int64(0)
	if ready {
		readyReplicas = replicas
	}
	lws.Object["status"] = map[string]any{"replicas": replicas, "readyReplicas": readyReplicas, "conditions": []any{map[string]any{
		"type": "Available", "status": status, "reason": reason, "message": "the sandbox plays the LeaderWorkerSet controller",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	return s.Client.Status().Update(ctx, lws)
}

// podTemplate reads one of a LeaderWorkerSet's pod templates; nil when it
// has none.
func podTemplate(lws *unstructured.Unstructured, field string) (*corev1.PodTemplateSpec, error) {
	m, found, err := unstructured.NestedMap(lws.Object, "spec", "leaderWorkerTemplate", field)
	if err != nil || !found {
		return nil, err
	}
	out := &corev1.PodTemplateSpec{}
	return out, runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}

// statefulSet is one of the StatefulSets the LeaderWorkerSet controller
// makes: its pods carry the template's labels and the controller's, and
// the controller's environment.
func statefulSet(name, ns string, owner *metav1.OwnerReference, replicas, firstOrdinal int32, tmpl *corev1.PodTemplateSpec, labels map[string]string, env []corev1.EnvVar) *appsv1.StatefulSet {
	t := tmpl.DeepCopy()
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for k, v := range labels {
		t.Labels[k] = v
	}
	for i := range t.Spec.Containers {
		// First, so that the template's own variables may refer to them.
		t.Spec.Containers[i].Env = append(slices.Clone(env), t.Spec.Containers[i].Env...)
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{*owner}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: name, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: *t, PodManagementPolicy: appsv1.ParallelPodManagement, Ordinals: &appsv1.StatefulSetOrdinals{Start: firstOrdinal}},
	}
}
