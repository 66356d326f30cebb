package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestInferenceGraphSample applies KServe's model-chainer sample over the
// two sample InferenceServices it names and waits for it to be Ready. Then
// it runs the router binary locally with the very graph the cluster's
// router got, its two InferenceServices swapped for two local backends
// (kwok pods serve nothing), and sends a request end to end.
func TestInferenceGraphSample(t *testing.T) {
	const ns = "graph"
	ig := applyGraphSample(t, ns)
	assert.Equal(t, "http://model-chainer-graph.example.com", ig.Status.URL)

	addr, _ := runLocalRouter(t, ns, "model-chainer")
	var resp *http.Response
	var err error
	waitFor(t, "the router to serve", func() bool {
		resp, err = http.Post("http://"+addr+"/v1/models/model-chainer:predict", "application/json",
			strings.NewReader(`{"instances":[[6.8,2.8,4.8,1.4]]}`))
		return err == nil
	})
	defer resp.Body.Close()
	var got struct {
		Model, Path string
		Got         json.RawMessage
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "xgboost-iris", got.Model, "the Sequence answers with its last step")
	assert.Equal(t, "/v1/models/xgboost-iris:predict", got.Path)
	assert.JSONEq(t, `{"instances":[[6.8,2.8,4.8,1.4]]}`, string(got.Got), "data: $request sends the request again")
}

// applyGraphSample applies KServe's model-chainer sample and the two
// sample InferenceServices it names in a new namespace, and returns the
// graph once it is Ready.
func applyGraphSample(t *testing.T, ns string) *v1alpha1.InferenceGraph {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	for _, f := range []string{"sklearn.yaml", "xgboost.yaml", "inference-graph.yaml"} {
		require.NoError(t, dev.ApplyFile(ctx, sb.Client, filepath.Join(root, "config/samples", f), ns), f)
	}
	ig := &v1alpha1.InferenceGraph{}
	waitFor(t, "model-chainer to be Ready", func() bool {
		return sb.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "model-chainer"}, ig) == nil &&
			meta.IsStatusConditionTrue(ig.Status.Conditions, v1beta1.ConditionReady)
	})
	return ig
}

// runLocalRouter runs the router binary locally with the very graph the
// cluster's router of the graph got, its two InferenceServices
// (sklearn-iris and xgboost-iris) swapped for two local backends (kwok pods
// serve nothing). It returns the router's address and its metrics'.
func runLocalRouter(t *testing.T, ns, graph string) (addr, metricsAddr string) {
	t.Helper()
	dep := &appsv1.Deployment{}
	require.NoError(t, sb.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: graph}, dep))
	graphJSON, ok := strings.CutPrefix(dep.Spec.Template.Spec.Containers[0].Args[0], "--graph-json=")
	require.True(t, ok, "the router gets the graph as its first argument")

	// Two local model servers in place of the InferenceServices.
	backend := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"model":%q,"path":%q,"got":%s}`, name, r.URL.Path, body)
		}))
		t.Cleanup(s.Close)
		return s
	}
	for _, name := range []string{"sklearn-iris", "xgboost-iris"} {
		cluster := "http://" + name + "-predictor." + ns + ".svc.cluster.local"
		require.Contains(t, graphJSON, cluster+"/v1/models/"+name+":predict")
		graphJSON = strings.ReplaceAll(graphJSON, cluster, backend(name).URL)
	}
	addr, metricsAddr = freeAddr(t), freeAddr(t)
	router := exec.Command(buildRouter(t), "--graph-json="+graphJSON, "--addr="+addr, "--metrics-addr="+metricsAddr, "--drain-delay=0s")
	router.Stderr = os.Stderr
	require.NoError(t, router.Start())
	t.Cleanup(func() { _ = router.Process.Kill(); _ = router.Wait() })
	return addr, metricsAddr
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// buildRouter builds cmd/router into the test's temporary directory.
func buildRouter(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	bin, err := sandbox.BuildBinary(root, "./cmd/router", t.TempDir())
	require.NoError(t, err)
	return bin
}
