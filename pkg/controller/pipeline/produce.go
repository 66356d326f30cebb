package pipeline

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// produce renders every producer into out, in order, or the failure that
// stops the run. known are the child kinds the gate looks objects up in,
// present says which kinds' CRDs exist. It reads nothing from the cluster.
func produce(producers []Producer, known []kinds.Kind, present func(kinds.Kind) bool, out *Outcome) error {
	out.ProducedBy = map[string]v1beta1.ComponentType{}
	for _, p := range producers {
		objs, failure, err := p.Render()
		if err != nil {
			return err
		}
		if failure != nil {
			out.Failure = failure
			return nil
		}
		kept, k := gate(objs, known, present)
		if k != nil {
			if failure := p.Absent(k); failure != nil {
				out.Failure = failure
				return nil
			}
		}
		for _, o := range kept {
			out.ProducedBy[o.String()] = p.Component()
		}
		out.Objects = append(out.Objects, kept...)
	}
	return nil
}

// gate passes the objects whose kinds can be created now and names the
// first optional kind among them, in the order of known, whose CRD is
// absent (nil when none is); the objects of every absent kind are left out.
func gate(objs []apply.Object, known []kinds.Kind, present func(kinds.Kind) bool) ([]apply.Object, *kinds.Kind) {
	var absent []kinds.Kind
	for _, k := range kinds.Used(known, gvksOf(objs)) {
		if !present(k) {
			absent = append(absent, k)
		}
	}
	if len(absent) == 0 {
		return objs, nil
	}
	kept := objs[:0:0]
	for _, o := range objs {
		if !kindIn(absent, o) {
			kept = append(kept, o)
		}
	}
	return kept, &absent[0]
}

func kindIn(ks []kinds.Kind, o apply.Object) bool {
	for _, k := range ks {
		if k.GVK == o.GVK {
			return true
		}
	}
	return false
}

func gvksOf(objs []apply.Object) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, len(objs))
	for i, o := range objs {
		out[i] = o.GVK
	}
	return out
}

// missingCRD is the failure of a kind whose CRD is absent: why says what
// needs it.
func missingCRD(component v1beta1.ComponentType, k *kinds.Kind, why string) *Failure {
	return &Failure{Component: component, Reason: v1beta1.ReasonMissingCRD, Message: k.MissingMessage(why)}
}

// withArticle is a kind's name with its indefinite article: "a
// ScaledObject", "an OpenTelemetryCollector".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
