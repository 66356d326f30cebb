package console

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// maxEvents bounds the Events a page shows, the newest first.
const maxEvents = 50

// Condition is one status condition as the page shows it.
type Condition struct {
	Type, Status, Reason, Message, Since string
}

// State is the CSS state of the condition's status.
func (c Condition) State() string { return conditionState(c.Status) }

// Child is an object the service's controller made.
type Child struct {
	Kind, Name string
	// State is ok, fail, wait or none; Detail says it in words
	// ("1/1 available", "Accepted").
	State, Detail string
	// Component is the object's serving.serval.dev/component label.
	Component string
	obj       *unstructured.Unstructured
}

// Event is one Event about the service.
type Event struct {
	Type, Reason, Message, Age string
	Count                      int32
}

// Detail is everything one service's page shows.
type Detail struct {
	Row
	UID        types.UID
	Message    string
	Conditions []Condition
	Children   []Child
	Events     []Event
	Manifest   string
	// Hidden are the child kinds the user may not list here.
	Hidden []string
	Graph  *Diagram
	LLM    *Diagram
	// GraphNote says why a graph is not drawn.
	GraphNote string
}

// maxDrawnNodes bounds the graphs drawn: past it a drawing says little
// and costs the page its size.
const maxDrawnNodes = 200

// pageKind maps the kind in a page's path to the service kind.
func pageKind(path string) (serving.ServiceKind, bool) {
	for _, k := range serving.ServiceKinds {
		if strings.EqualFold(k.Name, path) {
			return k, true
		}
	}
	return serving.ServiceKind{}, false
}

// ownerLabel is the label that names a service of the kind on its
// children, as the manager writes it.
func ownerLabel(kind string) string { return owner.Ref{Kind: kind}.Label() }

// detail reads one service, its children and Events as the user.
func (s *Server) detail(ctx context.Context, c client.Reader, k serving.ServiceKind, namespace, name string) (*Detail, error) {
	obj := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	d := Detail{Row: rowOf(obj), UID: obj.GetUID()}
	for _, cond := range conditionsOf(obj) {
		d.Conditions = append(d.Conditions, Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason,
			Message: cond.Message, Since: age(cond.LastTransitionTime.Time)})
		if cond.Type == "Ready" {
			d.Message = cond.Message
		}
	}
	d.Children, d.Hidden = s.children(ctx, c, k.Name, namespace, name, obj.GetUID())
	var err error
	d.Events, err = events(ctx, c, namespace, obj.GetUID())
	if apierrors.IsForbidden(err) {
		d.Hidden = append(d.Hidden, "Event")
	} else if err != nil {
		return nil, err
	}
	d.Manifest, err = manifest(obj, s.clients.scheme)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *v1alpha1.InferenceGraph:
		if n := len(o.Spec.Nodes); n > maxDrawnNodes {
			d.GraphNote = fmt.Sprintf("The graph has %d nodes; graphs of more than %d are not drawn (the manifest below has them all).", n, maxDrawnNodes)
		} else {
			d.Graph = graphDiagram(o, serviceStates(ctx, c, namespace, o))
		}
	case *v1alpha2.LLMInferenceService:
		d.LLM = s.llmDiagram(ctx, c, o, d.Children)
	}
	return &d, nil
}

// children lists, kind by kind, the objects of the namespace that carry
// the service's owner label and name it their controller.
func (s *Server) children(ctx context.Context, c client.Reader, kind, namespace, name string, uid types.UID) ([]Child, []string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []Child
	var hidden []string
	for _, k := range childkinds.OfServices(kind == "LLMInferenceService") {
		mapping, err := s.clients.mapper.RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			// Not installed, or cluster-scoped (a cache's volumes).
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
			err := c.List(ctx, l, client.InNamespace(namespace), client.MatchingLabels{ownerLabel(kind): name})
			mu.Lock()
			defer mu.Unlock()
			if apierrors.IsForbidden(err) {
				hidden = append(hidden, k.GVK.Kind)
				return
			}
			if err != nil {
				return
			}
			for i := range l.Items {
				item := &l.Items[i]
				if !controlledBy(item, uid) {
					continue
				}
				state, detail := childState(item)
				out = append(out, Child{Kind: k.GVK.Kind, Name: item.GetName(), State: state, Detail: detail,
					Component: item.GetLabels()[v1beta1.ComponentLabel], obj: item})
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b Child) int { return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name) })
	slices.Sort(hidden)
	return out, hidden
}

func controlledBy(obj client.Object, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// childState reads an object's state from its status, whatever its kind:
// replicas for workloads, the usual conditions, or a route's parents.
func childState(u *unstructured.Unstructured) (state, detail string) {
	switch u.GetKind() {
	case "Deployment", "LeaderWorkerSet", "StatefulSet":
		want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		field := "availableReplicas"
		if u.GetKind() != "Deployment" {
			field = "readyReplicas"
		}
		have, _, _ := unstructured.NestedInt64(u.Object, "status", field)
		switch {
		case want == 0:
			return "none", "scaled to zero"
		case have >= want:
			return "ok", fmt.Sprintf("%d/%d available", have, want)
		case have > 0:
			return "wait", fmt.Sprintf("%d/%d available", have, want)
		}
		if cond := meta.FindStatusCondition(conditionsAt(u.Object, "status", "conditions"), "Progressing"); cond != nil && cond.Status == metav1.ConditionFalse {
			return "fail", fmt.Sprintf("0/%d available: %s", want, cond.Message)
		}
		return "wait", fmt.Sprintf("0/%d available", want)
	}
	switch u.GroupVersionKind().GroupKind().String() {
	case "HorizontalPodAutoscaler.autoscaling":
		lo, found, _ := unstructured.NestedInt64(u.Object, "spec", "minReplicas")
		if !found {
			lo = 1
		}
		hi, _, _ := unstructured.NestedInt64(u.Object, "spec", "maxReplicas")
		cur, _, _ := unstructured.NestedInt64(u.Object, "status", "currentReplicas")
		return "none", fmt.Sprintf("%d replicas (%d-%d)", cur, lo, hi)
	case "Ingress.networking.k8s.io":
		lbs, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
		for _, lb := range lbs {
			m, _ := lb.(map[string]any)
			if addr := fmt.Sprint(m["ip"]) + fmt.Sprint(m["hostname"]); m["ip"] != nil || m["hostname"] != nil {
				return "ok", "at " + strings.ReplaceAll(addr, "<nil>", "")
			}
		}
		return "none", "no address yet"
	case "Service":
		typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
		ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP")
		if typ == "" {
			typ = "ClusterIP"
		}
		return "none", strings.TrimSpace(typ + " " + ip)
	}
	conds := conditionsAt(u.Object, "status", "conditions")
	for _, t := range []string{"Ready", "Available", "Programmed", "Accepted", "Active"} {
		if cond := meta.FindStatusCondition(conds, t); cond != nil {
			return conditionState(string(cond.Status)), statusWord(cond)
		}
	}
	// Gateway API routes and InferencePools report per parent.
	parents, _, _ := unstructured.NestedSlice(u.Object, "status", "parents")
	if len(parents) > 0 {
		state, detail = "ok", "Accepted"
		for _, p := range parents {
			pm, _ := p.(map[string]any)
			cond := meta.FindStatusCondition(conditionsAt(pm, "conditions"), "Accepted")
			if cond == nil {
				return "wait", "not yet accepted"
			}
			if cond.Status != metav1.ConditionTrue {
				return "fail", statusWord(cond)
			}
		}
		return state, detail
	}
	if _, hasStatus := u.Object["status"]; hasStatus && (u.GetKind() == "HTTPRoute" || u.GetKind() == "InferencePool") {
		return "wait", "not yet accepted"
	}
	return "none", "made"
}

// statusWord says a condition in a word or two: its type when True, else
// "not" and its type, and its reason.
func statusWord(cond *metav1.Condition) string {
	if cond.Status == metav1.ConditionTrue {
		return cond.Type
	}
	s := "not " + cond.Type
	if cond.Reason != "" {
		s += ": " + cond.Reason
	}
	return s
}

// conditionsAt reads the conditions at fields of an Unstructured object's
// map; entries that are not conditions are left out.
func conditionsAt(obj map[string]any, fields ...string) []metav1.Condition {
	l, _, _ := unstructured.NestedSlice(obj, fields...)
	var out []metav1.Condition
	for _, c := range l {
		m, ok := c.(map[string]any)
		var cond metav1.Condition
		if ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
			out = append(out, cond)
		}
	}
	return out
}

// conditionState is the CSS state of a condition's status.
func conditionState(status string) string {
	switch status {
	case "True":
		return "ok"
	case "False":
		return "fail"
	case "":
		return "none"
	}
	return "wait"
}

// events lists the Events about the object, newest first.
func events(ctx context.Context, c client.Reader, namespace string, uid types.UID) ([]Event, error) {
	var l corev1.EventList
	if err := c.List(ctx, &l, client.InNamespace(namespace), client.MatchingFields{"involvedObject.uid": string(uid)}); err != nil {
		return nil, err
	}
	slices.SortFunc(l.Items, func(a, b corev1.Event) int { return lastSeen(b).Compare(lastSeen(a)) })
	var out []Event
	for _, e := range l.Items {
		if len(out) == maxEvents {
			break
		}
		out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1), Age: age(lastSeen(e))})
	}
	return out, nil
}

func lastSeen(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// manifest is the object as YAML, without the bookkeeping of its fields'
// managers.
func manifest(obj client.Object, scheme *runtime.Scheme) (string, error) {
	c := obj.DeepCopyObject().(client.Object)
	c.SetManagedFields(nil)
	// A typed read leaves the kind out; the manifest says it.
	if gvk, err := apiutil.GVKForObject(c, scheme); err == nil {
		c.GetObjectKind().SetGroupVersionKind(gvk)
	}
	data, err := yaml.Marshal(c)
	return string(data), err
}

// gvk is a shorthand for the kinds the diagrams read.
func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}
