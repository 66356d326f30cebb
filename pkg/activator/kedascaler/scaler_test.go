package kedascaler

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// TestPushScaler drives the scaler over gRPC as KEDA's external-push
// scaler does: the stream says inactive, then active the moment a request
// is held, GetMetricSpec and GetMetrics give the target and the demand,
// and the stream says inactive again once the request was served. A
// ScaledObject of another namespace sees none of it.
func TestPushScaler(t *testing.T) {
	key := activator.Key{Namespace: "team-a", Name: "iris-predictor"}
	a := activator.New(activator.Limits{}, func(*http.Request) (activator.Key, bool) { return key, true }, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer replica.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	Register(srv, a)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := externalscaler.NewExternalScalerClient(conn)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref := &externalscaler.ScaledObjectRef{Name: "iris-predictor", Namespace: "team-a",
		ScalerMetadata: map[string]string{ServiceKey: "iris-predictor", TargetKey: "4"}}
	stream, err := client.StreamIsActive(ctx, ref)
	require.NoError(t, err)
	first, err := stream.Recv()
	require.NoError(t, err)
	assert.False(t, first.Result, "idle")

	done := make(chan int)
	go func() {
		resp, err := http.Post(front.URL, "text/plain", strings.NewReader("x"))
		if err != nil {
			done <- -1
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()
	active, err := stream.Recv()
	require.NoError(t, err)
	assert.True(t, active.Result, "active once a request is held")

	spec, err := client.GetMetricSpec(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, int64(4), spec.MetricSpecs[0].TargetSize)
	metrics, err := client.GetMetrics(ctx, &externalscaler.GetMetricsRequest{ScaledObjectRef: ref, MetricName: MetricName})
	require.NoError(t, err)
	assert.Equal(t, int64(1), metrics.MetricValues[0].MetricValue)

	other := &externalscaler.ScaledObjectRef{Name: "x", Namespace: "team-b", ScalerMetadata: map[string]string{ServiceKey: "iris-predictor"}}
	isActive, err := client.IsActive(ctx, other)
	require.NoError(t, err)
	assert.False(t, isActive.Result, "another namespace's ScaledObject sees its own namespace only")

	a.SetBackend(key, strings.TrimPrefix(replica.URL, "http://"))
	assert.Equal(t, http.StatusOK, <-done)
	idle, err := stream.Recv()
	require.NoError(t, err)
	assert.False(t, idle.Result, "inactive once served")

	_, err = client.GetMetricSpec(ctx, &externalscaler.ScaledObjectRef{Namespace: "team-a"})
	assert.ErrorContains(t, err, "names no service")
}

// TestTheTriggerNamesWhatTheScalerReads: the ScaledObject trigger Serval
// writes names the component in the metadata key the scaler reads.
func TestTheTriggerNamesWhatTheScalerReads(t *testing.T) {
	trigger := standard.ActivatorTrigger("serval-activator.serval-system.svc.cluster.local:9091", "iris-predictor")
	assert.Equal(t, "external-push", trigger["type"])
	meta := trigger["metadata"].(map[string]any)
	assert.Equal(t, "iris-predictor", meta[ServiceKey])
	assert.Equal(t, "serval-activator.serval-system.svc.cluster.local:9091", meta["scalerAddress"])
}
