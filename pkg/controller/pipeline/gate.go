package pipeline

import (
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/registry"
)

// Gate passes the objects a producer rendered whose kinds can be created
// now, and names the first optional kind among them whose CRD is absent
// (nil when none is): the kinds come from the objects themselves, looked up
// in the registry, so that no producer lists the optional kinds it makes.
// The objects of every absent kind are left out.
func (p *Pipeline) Gate(objs []apply.Object) (kept []apply.Object, missing *kinds.Kind) {
	return gate(objs, p.Watches.Present)
}

// gate is Gate with present saying which kinds' CRDs exist.
func gate(objs []apply.Object, present func(kinds.Kind) bool) ([]apply.Object, *kinds.Kind) {
	var absent []kinds.Kind
	for _, k := range kinds.Used(registry.Kinds(), gvksOf(objs)) {
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
