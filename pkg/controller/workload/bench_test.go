package workload_test

import (
	"encoding/json"
	"testing"

	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// BenchmarkStandardObjects renders a component's Deployment, Service and HPA
// and encodes them as the apply step does to hash them: the cost of one
// reconcile's rendering, paid even when the skip cache then sends nothing.
func BenchmarkStandardObjects(b *testing.B) {
	comps, err := components.Build(components.Inputs{ISVC: custom("bench", nil, nil), Config: config.Default()})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		objs, err := standard.Mode{}.Objects(comps[0])
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range objs {
			if _, err := json.Marshal(o.Spec); err != nil {
				b.Fatal(err)
			}
		}
	}
}
