package localmodel

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Selector is the node selector of a group: its volume template's
// required node affinity; nil when the template has none (admission
// refuses such a group).
func Selector(g *v1alpha1.LocalModelNodeGroup) *corev1.NodeSelector {
	if a := g.Spec.PersistentVolumeSpec.NodeAffinity; a != nil {
		return a.Required
	}
	return nil
}

// NodesOf returns the names of the nodes a group selects, ready or not,
// in name order.
func NodesOf(g *v1alpha1.LocalModelNodeGroup, nodes []corev1.Node) (ready, notReady []string) {
	sel := Selector(g)
	if sel == nil {
		return nil, nil
	}
	for i := range nodes {
		n := &nodes[i]
		ok, err := corev1helpers.MatchNodeSelectorTerms(n, sel)
		if err != nil || !ok {
			continue
		}
		if nodeReady(n) {
			ready = append(ready, n.Name)
		} else {
			notReady = append(notReady, n.Name)
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	return ready, notReady
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NodeAffinity is the affinity a service using a group's copy gets: the
// group's nodes, required, so its pods land where the model is.
func NodeAffinity(g *v1alpha1.LocalModelNodeGroup) *corev1.NodeAffinity {
	sel := Selector(g)
	if sel == nil {
		return nil
	}
	return &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel.DeepCopy()}
}
