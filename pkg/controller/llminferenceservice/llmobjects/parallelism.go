package llmobjects

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// DefaultDataParallelRPCPort is vLLM's data-parallel RPC port when
// parallelism.dataRPCPort is unset, KServe's default.
const DefaultDataParallelRPCPort = 5555

// DataParallelLocalEnv carries parallelism.dataLocal into a multi-node
// data-parallel pod: its preset's script starts the pod's ranks at
// LWS_WORKER_INDEX times it.
const DataParallelLocalEnv = "DATA_PARALLEL_SIZE_LOCAL"

// addParallelism passes a part's parallelism to vLLM, KServe's rules:
//   - on one node, the tensor parallel size;
//   - across nodes with data parallelism, on every pod: the data parallel
//     size, its local size, the RPC port, expert parallelism and the tensor
//     parallel size (the address and start rank come from the
//     LeaderWorkerSet's environment, in the preset's script);
//   - across nodes with pipeline parallelism, on the leader: the pipeline
//     and tensor parallel sizes and Ray as the executor (the workers join
//     the leader's Ray cluster).
//
// A flag the container's arguments set already is left as they set it.
func addParallelism(c *corev1.Container, p *v1alpha2.ParallelismSpec, multiNode, worker bool) {
	add := func(flag string, value ...string) {
		if !hasArg(c, flag) {
			c.Args = append(c.Args, append([]string{flag}, value...)...)
		}
	}
	size := func(v *int32) string { return strconv.Itoa(int(ptr.Deref(v, 1))) }
	switch {
	case p == nil:
	case multiNode && p.IsDataParallel():
		add("--data-parallel-size", size(p.Data))
		add("--data-parallel-size-local", size(p.DataLocal))
		add("--data-parallel-rpc-port", strconv.Itoa(int(ptr.Deref(p.DataRPCPort, DefaultDataParallelRPCPort))))
		if p.Expert {
			add("--enable-expert-parallel")
		}
		if p.Tensor != nil {
			add("--tensor-parallel-size", size(p.Tensor))
		}
		setEnv(c, DataParallelLocalEnv, size(p.DataLocal))
	case multiNode && p.IsPipelineParallel() && !worker:
		add("--pipeline-parallel-size", size(p.Pipeline))
		if p.Tensor != nil {
			add("--tensor-parallel-size", size(p.Tensor))
		}
		add("--distributed-executor-backend", "ray")
	case !multiNode && p.Tensor != nil:
		add("--tensor-parallel-size", size(p.Tensor))
	}
}

// hasArg reports whether the container's command or arguments set a flag,
// alone, as flag=value, or inside a shell script.
func hasArg(c *corev1.Container, flag string) bool {
	return slices.ContainsFunc(append(slices.Clone(c.Command), c.Args...), func(a string) bool {
		return a == flag || strings.HasPrefix(a, flag+"=") || strings.Contains(a, flag+" ")
	})
}

// setEnv sets an environment variable unless the container sets it.
func setEnv(c *corev1.Container, name, value string) {
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
		c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	}
}
