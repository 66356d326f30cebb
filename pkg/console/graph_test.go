package console

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

func boxIDs(d *Diagram) []string {
	var out []string
	for _, b := range d.Boxes {
		out = append(out, b.ID)
	}
	return out
}

func edgePairs(d *Diagram) []string {
	var out []string
	for _, e := range d.Edges {
		s := e.From + " -> " + e.To
		if e.Label != "" {
			s += " [" + e.Label + "]"
		}
		out = append(out, s)
	}
	return out
}

func boxByID(d *Diagram, id string) *Box {
	for _, b := range d.Boxes {
		if b.ID == id {
			return b
		}
	}
	return nil
}

func step(t v1alpha1.InferenceTarget) v1alpha1.InferenceStep {
	return v1alpha1.InferenceStep{InferenceTarget: t}
}

// TestGraphDiagram: nodes in columns by their longest path from the root,
// every step an edge from its row to the node, service or URL it calls,
// services after their last caller, a Splitter's weights and a Switch's
// conditions on the edges, each service with its state.
func TestGraphDiagram(t *testing.T) {
	split := step(v1alpha1.InferenceTarget{ServiceName: "model-a"})
	split.Weight = ptr.To[int64](30)
	split2 := step(v1alpha1.InferenceTarget{ServiceURL: "http://b.default/v1/models/b:predict"})
	split2.Weight = ptr.To[int64](70)
	sw := step(v1alpha1.InferenceTarget{ServiceName: "model-a"})
	sw.Condition = "instances.#(x>1)"
	g := &v1alpha1.InferenceGraph{Spec: v1alpha1.InferenceGraphSpec{Nodes: map[string]v1alpha1.InferenceRouter{
		"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{
			step(v1alpha1.InferenceTarget{ServiceName: "classifier"}),
			step(v1alpha1.InferenceTarget{NodeName: "split"}),
			step(v1alpha1.InferenceTarget{NodeName: "choose"}),
		}},
		"split":  {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{split, split2}},
		"choose": {RouterType: v1alpha1.Switch, Steps: []v1alpha1.InferenceStep{sw, step(v1alpha1.InferenceTarget{NodeName: "split"})}},
	}}}
	d := graphDiagram(g, map[string]serviceState{"classifier": {"ok", "Ready"}, "model-a": {"fail", "not Ready: ModelLoadFailed"}})
	assert.Equal(t, []string{"node:root", "node:choose", "service:classifier", "node:split", "service:model-a", "url:http://b.default/v1/models/b:predict"}, boxIDs(d))
	assert.ElementsMatch(t, []string{
		"step:root/0 -> service:classifier",
		"step:root/1 -> node:split",
		"step:root/2 -> node:choose",
		"step:split/0 -> service:model-a [30%]",
		"step:split/1 -> url:http://b.default/v1/models/b:predict [70%]",
		"step:choose/0 -> service:model-a [instances.#(x>1)]",
		"step:choose/1 -> node:split",
	}, edgePairs(d))
	// Columns: root; choose and classifier; split; then split's targets.
	col := func(id string) int { return (boxByID(d, id).X - pad) / (boxW + gapX) }
	assert.Equal(t, []int{0, 1, 1, 2, 3, 3}, []int{col("node:root"), col("node:choose"), col("service:classifier"), col("node:split"), col("service:model-a"), col("url:http://b.default/v1/models/b:predict")})
	assert.Equal(t, "fail", boxByID(d, "service:model-a").State)
	assert.Equal(t, "ok", boxByID(d, "service:classifier").State)
	assert.Equal(t, []string{"→ classifier", "→ split", "→ choose"}, rowTexts(boxByID(d, "node:root")))
	for _, e := range d.Edges {
		assert.NotEmpty(t, e.D, "every edge is drawn")
	}
	for _, b := range d.Boxes {
		assert.LessOrEqual(t, b.X+b.W, d.Width)
		assert.LessOrEqual(t, b.Y+b.H, d.Height)
	}
}

func rowTexts(b *Box) []string {
	var out []string
	for _, r := range b.Rows {
		out = append(out, r.Text)
	}
	return out
}

// TestGraphDiagramSurvivesACycle: a stored cycle (admission refuses one,
// but an object may predate it) is drawn, not looped on.
func TestGraphDiagramSurvivesACycle(t *testing.T) {
	g := &v1alpha1.InferenceGraph{Spec: v1alpha1.InferenceGraphSpec{Nodes: map[string]v1alpha1.InferenceRouter{
		"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{step(v1alpha1.InferenceTarget{NodeName: "a"})}},
		"a":    {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{step(v1alpha1.InferenceTarget{NodeName: "b"})}},
		"b":    {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{step(v1alpha1.InferenceTarget{NodeName: "a"})}},
	}}}
	d := graphDiagram(g, nil)
	ids := boxIDs(d)
	slices.Sort(ids)
	assert.Equal(t, []string{"node:a", "node:b", "node:root"}, ids)
	assert.Len(t, d.Edges, 3)
}

// TestWrapTitle: long names break after a hyphen, in two lines at most.
func TestWrapTitle(t *testing.T) {
	assert.Equal(t, []string{"short"}, wrapTitle("short", 27))
	assert.Equal(t, []string{"facebook-opt-125m-scheduler-", "kserve-router-scheduler"}, wrapTitle("facebook-opt-125m-scheduler-kserve-router-scheduler", 28))
	assert.Equal(t, []string{"abcdefghij", "klmnopqrs…"}, wrapTitle("abcdefghijklmnopqrstuvwxyz", 10))
}
