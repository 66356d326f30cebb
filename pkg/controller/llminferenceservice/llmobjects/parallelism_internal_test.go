package llmobjects

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// TestAddParallelism: the flags each shape of parallelism gives vLLM, and a
// flag the container sets left as it is.
func TestAddParallelism(t *testing.T) {
	i := func(v int32) *int32 { return ptr.To(v) }
	tests := []struct {
		name              string
		p                 *v1alpha2.ParallelismSpec
		multiNode, worker bool
		args              []string
		want              []string
		wantEnv           bool
	}{
		{name: "none", p: nil},
		{name: "tensor on one node", p: &v1alpha2.ParallelismSpec{Tensor: i(4)}, want: []string{"--tensor-parallel-size", "4"}},
		{name: "data on one node passes the tensor size alone, as KServe", p: &v1alpha2.ParallelismSpec{Data: i(2), DataLocal: i(2)}},
		{name: "data across nodes", p: &v1alpha2.ParallelismSpec{Data: i(16), DataLocal: i(8), Expert: true, Tensor: i(1)}, multiNode: true,
			want: []string{"--data-parallel-size", "16", "--data-parallel-size-local", "8", "--data-parallel-rpc-port", "5555",
				"--enable-expert-parallel", "--tensor-parallel-size", "1"}, wantEnv: true},
		{name: "data across nodes, a worker, its RPC port", p: &v1alpha2.ParallelismSpec{Data: i(4), DataLocal: i(2), DataRPCPort: i(6000)},
			multiNode: true, worker: true,
			want: []string{"--data-parallel-size", "4", "--data-parallel-size-local", "2", "--data-parallel-rpc-port", "6000"}, wantEnv: true},
		{name: "pipeline, the leader", p: &v1alpha2.ParallelismSpec{Pipeline: i(2), Tensor: i(8)}, multiNode: true,
			want: []string{"--pipeline-parallel-size", "2", "--tensor-parallel-size", "8", "--distributed-executor-backend", "ray"}},
		{name: "pipeline, a worker runs Ray alone", p: &v1alpha2.ParallelismSpec{Pipeline: i(2)}, multiNode: true, worker: true},
		{name: "a flag the container sets", p: &v1alpha2.ParallelismSpec{Tensor: i(4)}, args: []string{"--tensor-parallel-size=2"},
			want: []string{"--tensor-parallel-size=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Args: tt.args}
			addParallelism(c, tt.p, tt.multiNode, tt.worker)
			assert.Equal(t, tt.want, c.Args)
			assert.Equal(t, tt.wantEnv, len(c.Env) == 1 && c.Env[0].Name == DataParallelLocalEnv)
		})
	}
}

// TestRollingUpdates: rolloutStrategy on a Deployment and on a
// LeaderWorkerSet, each bound left out taking the kind's default.
func TestRollingUpdates(t *testing.T) {
	assert.Nil(t, deploymentStrategy(&v1alpha2.RolloutStrategy{}))
	assert.Nil(t, lwsRollingUpdate(nil))
	surge := ptr.To(intstr.FromString("50%"))
	d := deploymentStrategy(&v1alpha2.RolloutStrategy{MaxSurge: surge})
	assert.Equal(t, surge, d.RollingUpdate.MaxSurge)
	assert.Nil(t, d.RollingUpdate.MaxUnavailable, "Kubernetes' 25%")
	assert.Equal(t, map[string]any{"maxUnavailable": int64(1), "maxSurge": "50%"}, lwsRollingUpdate(&v1alpha2.RolloutStrategy{MaxSurge: surge}))
}
