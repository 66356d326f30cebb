package runtime

import (
	"fmt"
	"testing"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// BenchmarkSelect selects among 200 runtimes, 20 of which serve the format:
// the work of one reconcile in a cluster with many runtimes.
func BenchmarkSelect(b *testing.B) {
	var runtimes []Runtime
	for i := range 200 {
		opts := []rtOption{format(fmt.Sprintf("format-%d", i%10), true, int32(i%5+1), "1"), protocols(v1beta1.ProtocolV1, v1beta1.ProtocolV2)}
		if i%3 == 0 {
			opts = append(opts, namespaced)
		}
		runtimes = append(runtimes, rt(fmt.Sprintf("rt-%03d", i), opts...))
	}
	r := req("format-3")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Select(r, runtimes); err != nil {
			b.Fatal(err)
		}
	}
}
