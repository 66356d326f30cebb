package runtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type rtOption func(*Runtime)

// rt returns an enabled cluster runtime named name, created at epoch.
func rt(name string, opts ...rtOption) Runtime {
	r := Runtime{Name: name, Created: metav1.NewTime(epoch), Spec: &v1alpha1.ServingRuntimeSpec{
		ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{Name: "kserve-container"}}},
	}}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func namespaced(r *Runtime) { r.Namespaced = true }

func format(name string, autoSelect bool, prio int32, version string) rtOption {
	return func(r *Runtime) {
		f := v1alpha1.SupportedModelFormat{Name: name, AutoSelect: ptr.To(autoSelect)}
		if prio > 0 {
			f.Priority = ptr.To(prio)
		}
		if version != "" {
			f.Version = ptr.To(version)
		}
		r.Spec.SupportedModelFormats = append(r.Spec.SupportedModelFormats, f)
	}
}

func protocols(ps ...v1beta1.Protocol) rtOption {
	return func(r *Runtime) { r.Spec.ProtocolVersions = ps }
}

func createdAfter(d time.Duration) rtOption {
	return func(r *Runtime) { r.Created = metav1.NewTime(epoch.Add(d)) }
}

func disabled(r *Runtime) { r.Spec.Disabled = ptr.To(true) }
func undecodable(r *Runtime) {
	r.Spec, r.DecodeError = &v1alpha1.ServingRuntimeSpec{}, "spec.containers[0].ports[0].containerPort: cannot unmarshal string"
}
func multiModel(r *Runtime) { r.Spec.MultiModel = ptr.To(true) }

func req(formatName string, opts ...func(*Request)) Request {
	r := Request{ModelFormat: v1beta1.ModelFormat{Name: formatName}}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func withProtocol(p v1beta1.Protocol) func(*Request) { return func(r *Request) { r.Protocol = &p } }
func withVersion(v string) func(*Request)            { return func(r *Request) { r.ModelFormat.Version = &v } }
func withRuntime(n string) func(*Request)            { return func(r *Request) { r.Runtime = n } }
func withPrevious(name string, ns bool, p v1beta1.Protocol) func(*Request) {
	return func(r *Request) { r.Previous = &Previous{Name: name, Namespaced: ns, Protocol: p} }
}

// The default-runtime shapes that the no-protocol rule is about.
var (
	sklearnServer = rt("kserve-sklearnserver", format("sklearn", true, 1, "1"), protocols(v1beta1.ProtocolV1, v1beta1.ProtocolV2))
	mlserver      = rt("kserve-mlserver", format("sklearn", true, 2, "1"), format("xgboost", true, 2, "1"), protocols(v1beta1.ProtocolV2))
	triton        = rt("kserve-tritonserver", format("onnx", true, 1, "1"), format("tensorflow", true, 2, "2"),
		protocols(v1beta1.ProtocolV2, v1beta1.ProtocolGRPCV2))
)

func TestSelect(t *testing.T) {
	tests := []struct {
		name         string
		req          Request
		runtimes     []Runtime
		wantRuntime  string
		wantProtocol v1beta1.Protocol
		wantSticky   bool
	}{
		{"namespaced beats cluster whatever the priority", req("sklearn"),
			[]Runtime{rt("cluster", format("sklearn", true, 10, "")), rt("ns", namespaced, format("sklearn", true, 1, ""))},
			"ns", v1beta1.ProtocolV1, false},
		{"higher priority first", req("sklearn"),
			[]Runtime{rt("low", format("sklearn", true, 1, "")), rt("high", format("sklearn", true, 5, ""))},
			"high", v1beta1.ProtocolV1, false},
		{"a priority beats no priority", req("sklearn"),
			[]Runtime{rt("none", format("sklearn", true, 0, "")), rt("some", format("sklearn", true, 1, ""))},
			"some", v1beta1.ProtocolV1, false},
		{"protocol rank breaks a priority tie", req("onnx"),
			[]Runtime{rt("grpc", format("onnx", true, 1, ""), protocols(v1beta1.ProtocolGRPCV2)),
				rt("rest", format("onnx", true, 1, ""), protocols(v1beta1.ProtocolV2))},
			"rest", v1beta1.ProtocolV2, false},
		{"newest breaks a full tie", req("sklearn"),
			[]Runtime{rt("old", format("sklearn", true, 1, "")), rt("new", format("sklearn", true, 1, ""), createdAfter(time.Hour))},
			"new", v1beta1.ProtocolV1, false},
		{"name breaks a tie of the same age", req("sklearn"),
			[]Runtime{rt("b", format("sklearn", true, 1, "")), rt("a", format("sklearn", true, 1, ""))},
			"a", v1beta1.ProtocolV1, false},
		{"no protocol: sklearn stays on the v1 server though MLServer has a higher priority", req("sklearn"),
			[]Runtime{mlserver, sklearnServer}, "kserve-sklearnserver", v1beta1.ProtocolV1, false},
		{"no protocol: onnx falls back to Triton on v2", req("onnx"),
			[]Runtime{sklearnServer, mlserver, triton}, "kserve-tritonserver", v1beta1.ProtocolV2, false},
		{"v2 asked: MLServer by priority", req("sklearn", withProtocol(v1beta1.ProtocolV2)),
			[]Runtime{sklearnServer, mlserver}, "kserve-mlserver", v1beta1.ProtocolV2, false},
		{"version matches on the major version", req("tensorflow", withVersion("2.14")),
			[]Runtime{rt("tf1", format("tensorflow", true, 9, "1")), triton}, "kserve-tritonserver", v1beta1.ProtocolV2, false},
		{"disabled and multi-model runtimes are skipped", req("sklearn"),
			[]Runtime{rt("off", format("sklearn", true, 9, ""), disabled), rt("mm", format("sklearn", true, 9, ""), multiModel),
				rt("on", format("sklearn", true, 1, ""))}, "on", v1beta1.ProtocolV1, false},
		{"autoSelect off is skipped", req("sklearn"),
			[]Runtime{rt("manual", format("sklearn", false, 9, "")), rt("auto", format("sklearn", true, 1, ""))},
			"auto", v1beta1.ProtocolV1, false},
		{"explicit runtime, no protocol: v1 when supported", req("sklearn", withRuntime("kserve-sklearnserver")),
			[]Runtime{sklearnServer, mlserver}, "kserve-sklearnserver", v1beta1.ProtocolV1, false},
		{"explicit runtime that speaks no v1: its best protocol", req("sklearn", withRuntime("kserve-mlserver")),
			[]Runtime{sklearnServer, mlserver}, "kserve-mlserver", v1beta1.ProtocolV2, false},
		{"explicit runtime ignores autoSelect", req("sklearn", withRuntime("manual")),
			[]Runtime{rt("manual", format("sklearn", false, 0, ""))}, "manual", v1beta1.ProtocolV1, false},
		{"explicit name: namespaced before cluster", req("sklearn", withRuntime("same")),
			[]Runtime{rt("same", format("sklearn", false, 0, "")), rt("same", namespaced, format("sklearn", false, 0, ""))},
			"same", v1beta1.ProtocolV1, false},
		{"sticky: a new, better runtime does not move the model", req("sklearn", withPrevious("old", false, v1beta1.ProtocolV1)),
			[]Runtime{rt("old", format("sklearn", true, 1, "")), rt("better", namespaced, format("sklearn", true, 9, ""))},
			"old", v1beta1.ProtocolV1, true},
		{"sticky ends when the runtime is disabled", req("sklearn", withPrevious("old", false, v1beta1.ProtocolV1)),
			[]Runtime{rt("old", format("sklearn", true, 1, ""), disabled), rt("other", format("sklearn", true, 1, ""))},
			"other", v1beta1.ProtocolV1, false},
		{"sticky ends when the runtime drops the format", req("sklearn", withPrevious("old", false, v1beta1.ProtocolV1)),
			[]Runtime{rt("old", format("xgboost", true, 1, "")), rt("other", format("sklearn", true, 1, ""))},
			"other", v1beta1.ProtocolV1, false},
		{"sticky ends when the runtime is deleted", req("sklearn", withPrevious("gone", false, v1beta1.ProtocolV1)),
			[]Runtime{rt("other", format("sklearn", true, 1, ""))}, "other", v1beta1.ProtocolV1, false},
		{"sticky keeps scope apart: a cluster runtime is not a namespaced one", req("sklearn", withPrevious("x", true, v1beta1.ProtocolV1)),
			[]Runtime{rt("x", format("sklearn", true, 1, "")), rt("y", format("sklearn", true, 5, ""))}, "y", v1beta1.ProtocolV1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select(tt.req, tt.runtimes)
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuntime, sel.Runtime.Name)
			assert.Equal(t, tt.wantProtocol, sel.Protocol)
			assert.Equal(t, tt.wantSticky, sel.Sticky)
		})
	}
}

func TestSelectFailures(t *testing.T) {
	tests := []struct {
		name       string
		req        Request
		runtimes   []Runtime
		wantReason v1beta1.FailureReason
		wantMsg    string
	}{
		{"explicit runtime missing", req("sklearn", withRuntime("nope")), []Runtime{sklearnServer},
			v1beta1.RuntimeNotRecognized, `no ServingRuntime or ClusterServingRuntime named "nope" exists for model format sklearn (no protocolVersion)`},
		{"explicit runtime disabled", req("sklearn", withRuntime("off")), []Runtime{rt("off", format("sklearn", true, 1, ""), disabled)},
			v1beta1.RuntimeDisabled, "ClusterServingRuntime off is disabled"},
		{"explicit runtime multi-model", req("sklearn", withRuntime("mm")), []Runtime{rt("mm", format("sklearn", true, 1, ""), multiModel)},
			v1beta1.RuntimeMultiModel, "is a multi-model runtime"},
		{"explicit runtime lacks the format", req("onnx", withRuntime("kserve-sklearnserver")), []Runtime{sklearnServer},
			v1beta1.RuntimeUnsupportedModelFormat, "ClusterServingRuntime kserve-sklearnserver does not support format onnx; it cannot serve model format onnx"},
		{"explicit runtime lacks the version", req("sklearn", withVersion("2"), withRuntime("kserve-sklearnserver")), []Runtime{sklearnServer},
			v1beta1.RuntimeUnsupportedModelFormat, "does not support version 2 of sklearn"},
		{"explicit runtime lacks the protocol", req("sklearn", withProtocol(v1beta1.ProtocolGRPCV2), withRuntime("kserve-sklearnserver")),
			[]Runtime{sklearnServer}, v1beta1.RuntimeUnsupportedProtocol, "does not support protocol grpc-v2"},
		{"explicit runtime undecodable", req("sklearn", withRuntime("broken")), []Runtime{rt("broken", undecodable), sklearnServer},
			v1beta1.RuntimeUndecodable, "ClusterServingRuntime broken cannot be read, its spec does not decode (spec.containers[0].ports[0].containerPort: cannot unmarshal string)"},
		{"previous runtime undecodable: stays, told why", req("sklearn", withPrevious("kserve-sklearnserver", false, v1beta1.ProtocolV1)),
			[]Runtime{rt("kserve-sklearnserver", undecodable), mlserver},
			v1beta1.RuntimeUndecodable, "ClusterServingRuntime kserve-sklearnserver, which serves this InferenceService, cannot be read"},
		{"undecodable runtimes are skipped with the reason", req("onnx"), []Runtime{rt("broken", undecodable)},
			v1beta1.NoSupportingRuntime, "ClusterServingRuntime broken: its spec does not decode (spec.containers[0].ports[0].containerPort"},
		{"no runtime at all", req("sklearn"), nil,
			v1beta1.NoSupportingRuntime, "no runtime supports model format sklearn (no protocolVersion): no ServingRuntime or ClusterServingRuntime exists"},
		{"no runtime for the protocol, with reasons", req("onnx", withProtocol(v1beta1.ProtocolV1)), []Runtime{sklearnServer, triton},
			v1beta1.NoSupportingRuntime, "no runtime supports model format onnx with protocol v1; considered 2: " +
				"ClusterServingRuntime kserve-tritonserver: does not support protocol v1; ClusterServingRuntime kserve-sklearnserver: does not support format onnx"},
		{"many skipped runtimes are truncated", req("onnx"), []Runtime{rt("a"), rt("b"), rt("c"), rt("d"), rt("e"), rt("f"), rt("g")},
			v1beta1.NoSupportingRuntime, "considered 7: ClusterServingRuntime a: does not support format onnx; ClusterServingRuntime b"},
		{"the nearest misses come first", req("onnx", withProtocol(v1beta1.ProtocolV1)),
			[]Runtime{rt("a"), rt("b"), rt("c"), rt("d"), rt("e"), rt("f"), triton},
			v1beta1.NoSupportingRuntime, "considered 7: ClusterServingRuntime kserve-tritonserver: does not support protocol v1; ClusterServingRuntime a: does not support format onnx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Select(tt.req, tt.runtimes)
			var selErr *SelectionError
			require.ErrorAs(t, err, &selErr)
			assert.Equal(t, tt.wantReason, selErr.Reason)
			assert.Contains(t, selErr.Message, tt.wantMsg)
		})
	}
	_, err := Select(req("onnx"), []Runtime{rt("a"), rt("b"), rt("c"), rt("d"), rt("e"), rt("f"), rt("g")})
	assert.Contains(t, err.Error(), "; and 2 more")
}

// TestSelectOrderIsTotal: the result does not depend on the input order.
func TestSelectOrderIsTotal(t *testing.T) {
	runtimes := []Runtime{
		rt("a", format("sklearn", true, 1, "")), rt("b", format("sklearn", true, 1, "")),
		rt("c", format("sklearn", true, 1, ""), createdAfter(time.Minute)), rt("d", namespaced, format("sklearn", true, 1, "")),
		rt("e", namespaced, format("sklearn", true, 1, "")),
	}
	want, err := Select(req("sklearn"), runtimes)
	require.NoError(t, err)
	for i := range runtimes {
		rotated := append(append([]Runtime{}, runtimes[i:]...), runtimes[:i]...)
		got, err := Select(req("sklearn"), rotated)
		require.NoError(t, err)
		assert.Equal(t, want.Runtime.Name, got.Runtime.Name)
		assert.Equal(t, want.Runtime.Namespaced, got.Runtime.Namespaced)
	}
}
