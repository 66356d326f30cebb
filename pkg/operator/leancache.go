package operator

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
)

// leanObject is the cache's transform for every object: it drops what
// Serval never reads before the object is stored. managedFields are most of
// the size of a small object; Serval reads two things there (see ownEntries).
func leanObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return leanPod(o), nil
	case *appsv1.Deployment:
		o.ManagedFields = ownEntries(o.ManagedFields, true)
		// Serval reads a Deployment's replicas and status, never its pod
		// template (what it applies is compared by hash): the template's
		// containers, resources and volumes were a fifth of the cache.
		o.Spec.Template.Spec = corev1.PodSpec{}
		return o, nil
	// Of its Services, autoscalers and Ingresses Serval reads the metadata
	// (owner, hash, generation) and an Ingress's load-balancer address; what
	// it applies is compared by hash, never with the live spec.
	case *corev1.Node:
		return leanNode(o), nil
	case *corev1.Service:
		o.ManagedFields = ownEntries(o.ManagedFields, false)
		o.Spec, o.Status = corev1.ServiceSpec{}, corev1.ServiceStatus{}
		return o, nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		// Of an HPA's status, an LLMInferenceService's ScalingReady reads
		// the conditions.
		o.ManagedFields = ownEntries(o.ManagedFields, false)
		o.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{}
		o.Status = autoscalingv2.HorizontalPodAutoscalerStatus{Conditions: o.Status.Conditions}
		return o, nil
	case *unstructured.Unstructured:
		// A LeaderWorkerSet's replicas are handed over to an autoscaler as
		// a Deployment's are: the Apply entry says whether Serval owns them.
		o.SetManagedFields(ownEntries(o.GetManagedFields(), o.GroupVersionKind().Group == "leaderworkerset.x-k8s.io"))
		return o, nil
	case *networkingv1.Ingress:
		o.ManagedFields = ownEntries(o.ManagedFields, false)
		o.Spec = networkingv1.IngressSpec{}
		return o, nil
	// InferenceServices and graphs are many, and applied with kubectl (or a
	// GitOps tool) they carry their whole spec again in an annotation that
	// Serval never reads nor passes on. Serval never writes them back
	// whole, only status patches computed between two copies of the cached
	// object, so what the cache drops is never lost.
	case *v1beta1.InferenceService, *v1alpha1.InferenceGraph:
		m := o.(metav1.Object)
		m.SetManagedFields(ownEntries(m.GetManagedFields(), false))
		delete(m.GetAnnotations(), corev1.LastAppliedConfigAnnotation)
		return o, nil
	case metav1.Object:
		o.SetManagedFields(ownEntries(o.GetManagedFields(), false))
		return o, nil
	}
	return obj, nil
}

// ownEntries keeps what Serval reads of managedFields: whether its field
// manager still has an Update entry (a child it created, whose fields move
// to its Apply entry before the first apply; the entry's fields are not
// needed, only that it is there), and, with withApply, its Apply entry
// whole (on Deployments: whether it still owns the replicas, for the
// autoscaler handover).
func ownEntries(entries []metav1.ManagedFieldsEntry, withApply bool) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Manager != apply.FieldOwner || e.Subresource != "" {
			continue
		}
		switch {
		case e.Operation == metav1.ManagedFieldsOperationUpdate:
			e.FieldsV1 = nil
			out = append(out, e)
		case e.Operation == metav1.ManagedFieldsOperationApply && withApply:
			out = append(out, e)
		}
	}
	return out
}

// leanPod keeps what the status reads from a component's pods: which
// InferenceService they belong to, their age, and the status fields that
// explain why they do not serve (scheduling, container states). The spec,
// most of a pod, is dropped.
func leanPod(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		},
		Status: corev1.PodStatus{
			Phase:                 p.Status.Phase,
			Conditions:            p.Status.Conditions,
			InitContainerStatuses: p.Status.InitContainerStatuses,
			ContainerStatuses:     p.Status.ContainerStatuses,
		},
	}
}

// leanTransform is leanObject as the cache takes it; tombstones of deleted
// objects pass through.
var leanTransform toolscache.TransformFunc = func(obj any) (any, error) {
	if _, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return obj, nil
	}
	return leanObject(obj)
}

// leanNode keeps what the node groups read of a node: its name, labels and
// fields (for the groups' node affinity), taints and readiness. Its images
// and volumes, most of a node, are dropped.
func leanNode(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Labels: n.Labels,
			CreationTimestamp: n.CreationTimestamp, DeletionTimestamp: n.DeletionTimestamp},
		Spec: corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out
}
