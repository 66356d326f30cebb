package runtime

import (
	"testing"
	"time"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// FuzzSelect builds runtimes and a request from fuzz input and checks that
// selection never panics and that a selection is always a valid candidate.
func FuzzSelect(f *testing.F) {
	f.Add("sklearn", "1", "", "v1", uint8(3), uint8(7))
	f.Add("onnx", "", "kserve-tritonserver", "", uint8(0), uint8(255))
	f.Add("", "1.2.3", "x", "grpc-v2", uint8(9), uint8(1))
	f.Fuzz(func(t *testing.T, formatName, version, explicit, protocol string, n, bits uint8) {
		var runtimes []Runtime
		for i := range int(n % 8) {
			opts := []rtOption{format(formatName, bits&1 == 0, int32(i%3), []string{"", "1", version}[i%3]),
				createdAfter(time.Duration(i%2) * time.Minute)}
			if bits&(1<<uint(i%8)) != 0 {
				opts = append(opts, namespaced)
			}
			if i%4 == 1 {
				opts = append(opts, protocols(v1beta1.ProtocolV2, v1beta1.Protocol(protocol)))
			}
			if i%5 == 2 {
				opts = append(opts, disabled)
			}
			runtimes = append(runtimes, rt(string(rune('a'+i)), opts...))
		}
		r := req(formatName, withRuntime(explicit))
		if version != "" {
			r.ModelFormat.Version = &version
		}
		if protocol != "" {
			p := v1beta1.Protocol(protocol)
			r.Protocol = &p
		}
		sel, err := Select(r, runtimes)
		if err == nil && (sel.Runtime.Spec.IsDisabled() || sel.Protocol == "") {
			t.Fatalf("invalid selection %+v for %+v", sel, r)
		}
	})
}
