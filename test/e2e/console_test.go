package e2e

import (
	"bufio"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/console"
)

const (
	consoleNS      = "console-a"
	consoleOtherNS = "console-b"
	consoleLLM     = "facebook-opt-125m-scheduler"
)

// consoleSamples applies samples of every service kind: two
// InferenceServices and the graph that chains them, and an
// LLMInferenceService behind the endpoint picker in consoleNS; one
// InferenceService in consoleOtherNS. It waits for all to be Ready.
func consoleSamples(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	applyGraphSample(t, consoleNS)
	require.NoError(t, dev.ApplyFile(ctx, sb.Client, filepath.Join(root, "config/samples/llm-opt-125m-scheduler.yaml"), consoleNS))
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consoleOtherNS}}))
	require.NoError(t, dev.ApplyFile(ctx, sb.Client, filepath.Join(root, "config/samples/sklearn.yaml"), consoleOtherNS))
	gateway := types.NamespacedName{Namespace: "serval-system", Name: "serval-ingress-gateway"}
	require.NoError(t, sb.PlayInferenceGateway(ctx, gateway, consoleNS, consoleLLM+"-inference-pool", consoleLLM+"-kserve-route", 90*time.Second))
	ready := func(obj client.Object, conds func() []metav1.Condition) func() bool {
		return func() bool {
			return sb.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj) == nil && meta.IsStatusConditionTrue(conds(), "Ready")
		}
	}
	for _, key := range []types.NamespacedName{{Namespace: consoleNS, Name: "sklearn-iris"}, {Namespace: consoleNS, Name: "xgboost-iris"}, {Namespace: consoleOtherNS, Name: "sklearn-iris"}} {
		isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		waitFor(t, key.String()+" to be Ready", ready(isvc, func() []metav1.Condition { return isvc.Status.Conditions }))
	}
	llm := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: consoleNS, Name: consoleLLM}}
	waitFor(t, consoleLLM+" to be Ready", ready(llm, func() []metav1.Condition { return llm.Status.Conditions }))
}

// TestConsole loads every page of the console in Chromium against the
// sandbox, with samples of every kind, and checks what the browser shows:
// the services with their state, one service's conditions, children,
// Events and manifest, the graph's nodes and edges, the LLM service's path
// from the Gateway to its model pods. A user bound to one namespace sees
// only that one. The screenshots are kept (bin/artifacts/console).
func TestConsole(t *testing.T) {
	b := newBrowser(t)
	consoleSamples(t)

	s, err := console.New(console.Options{Config: sb.Env.Config, Auth: console.AuthLocal, DefaultNamespace: "default"})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	page := func(path string) string {
		// The secret in the address becomes a cookie; the console then
		// sends the browser on to the same path without it.
		return srv.URL + path + sep(path) + "token=" + secretOf(t, s, srv.URL)
	}

	t.Run("services", func(t *testing.T) {
		doc := b.dom(t, page("/"))
		for _, want := range []struct{ kind, ns, name string }{
			{"InferenceService", consoleNS, "sklearn-iris"},
			{"InferenceService", consoleNS, "xgboost-iris"},
			{"InferenceGraph", consoleNS, "model-chainer"},
			{"LLMInferenceService", consoleNS, consoleLLM},
			{"InferenceService", consoleOtherNS, "sklearn-iris"},
		} {
			rows := find(doc, "tr", map[string]string{"data-kind": want.kind, "data-namespace": want.ns, "data-name": want.name})
			if assert.Len(t, rows, 1, "%s %s/%s", want.kind, want.ns, want.name) {
				assert.Equal(t, "True", must(attr(rows[0], "data-ready")))
			}
		}
		row := find(doc, "tr", map[string]string{"data-namespace": consoleNS, "data-name": "sklearn-iris"})[0]
		assert.Contains(t, text(row), "http://sklearn-iris-"+consoleNS+".example.com")
		assert.Contains(t, text(row), "sklearn · kserve-sklearnserver")
		b.screenshot(t, page("/"), "services", 1400, 700)

		// Past its bound the page lists no more and says so.
		small, err := console.New(console.Options{Config: sb.Env.Config, Auth: console.AuthLocal, MaxRows: 2})
		require.NoError(t, err)
		smallSrv := httptest.NewServer(small)
		t.Cleanup(smallSrv.Close)
		doc = b.dom(t, small.URL(smallSrv.URL))
		assert.Len(t, find(doc, "tr", map[string]string{"data-kind": "*"}), 2)
		note := find(doc, "p", map[string]string{"class": "note truncated"})
		if assert.Len(t, note, 1) {
			assert.Contains(t, text(note[0]), "Only the first 2 services are shown")
		}
	})

	t.Run("inferenceservice", func(t *testing.T) {
		path := "/services/inferenceservice/" + consoleNS + "/sklearn-iris"
		doc := b.dom(t, page(path))
		assert.Len(t, find(doc, "tr", map[string]string{"data-type": "Ready", "data-status": "True"}), 1)
		assert.Len(t, find(doc, "tr", map[string]string{"data-type": "PredictorReady", "data-status": "True"}), 1)
		dep := find(doc, "tr", map[string]string{"data-kind": "Deployment", "data-name": "sklearn-iris-predictor"})
		if assert.Len(t, dep, 1, "the predictor's Deployment is a child") {
			assert.Equal(t, "ok", must(attr(dep[0], "data-state")))
			assert.Contains(t, text(dep[0]), "1/1 available")
		}
		assert.Len(t, find(doc, "tr", map[string]string{"data-kind": "Service", "data-name": "sklearn-iris-predictor"}), 1)
		manifest := find(doc, "section", map[string]string{"id": "manifest"})
		require.Len(t, manifest, 1)
		assert.Contains(t, text(manifest[0]), "kind: InferenceService")
		assert.NotContains(t, text(manifest[0]), "managedFields")
		assert.NotEmpty(t, find(doc, "section", map[string]string{"id": "events"}))
		b.screenshot(t, page(path), "inferenceservice", 1400, 1100)
	})

	t.Run("inferencegraph", func(t *testing.T) {
		path := "/services/inferencegraph/" + consoleNS + "/model-chainer"
		doc := b.dom(t, page(path))
		for _, id := range []string{"node:root", "service:sklearn-iris", "service:xgboost-iris"} {
			assert.Len(t, find(doc, "g", map[string]string{"data-id": id}), 1, id)
		}
		assert.Equal(t, "ok", must(attr(find(doc, "g", map[string]string{"data-id": "service:sklearn-iris"})[0], "data-state")))
		for _, e := range [][2]string{{"step:root/0", "service:sklearn-iris"}, {"step:root/1", "service:xgboost-iris"}} {
			assert.Len(t, find(doc, "g", map[string]string{"class": "edge", "data-from": e[0], "data-to": e[1]}), 1, "%s -> %s", e[0], e[1])
		}
		assert.Len(t, find(doc, "tr", map[string]string{"data-kind": "Deployment", "data-name": "model-chainer"}), 1, "the router's Deployment")
		b.screenshot(t, page(path), "inferencegraph", 1400, 900)
	})

	t.Run("llminferenceservice", func(t *testing.T) {
		path := "/services/llminferenceservice/" + consoleNS + "/" + consoleLLM
		doc := b.dom(t, page(path))
		gateway := "gateway:serval-system/serval-ingress-gateway"
		route := "child:HTTPRoute/" + consoleLLM + "-kserve-route"
		pool := "child:InferencePool/" + consoleLLM + "-inference-pool"
		picker := "child:Deployment/" + consoleLLM + "-kserve-router-scheduler"
		workload := "child:Deployment/" + consoleLLM + "-kserve"
		for _, id := range []string{gateway, route, pool, picker, workload} {
			boxes := find(doc, "g", map[string]string{"data-id": id})
			if assert.Len(t, boxes, 1, id) {
				assert.Equal(t, "ok", must(attr(boxes[0], "data-state")), id)
			}
		}
		for _, e := range [][2]string{{gateway, route}, {route, pool}, {pool, picker}, {picker, workload}} {
			assert.Len(t, find(doc, "g", map[string]string{"class": "edge", "data-from": e[0], "data-to": e[1]}), 1, "%s -> %s", e[0], e[1])
		}
		b.screenshot(t, page(path), "llminferenceservice", 1500, 1000)
	})

	t.Run("a user bound to one namespace sees only it", func(t *testing.T) {
		proxy := viewerConsole(t, sb.Env.Config, true)
		doc := b.dom(t, proxy.URL+"/")
		assert.NotEmpty(t, find(doc, "tr", map[string]string{"data-namespace": consoleNS, "data-name": "sklearn-iris"}))
		assert.NotEmpty(t, find(doc, "tr", map[string]string{"data-namespace": consoleNS, "data-name": "model-chainer"}))
		assert.Empty(t, find(doc, "tr", map[string]string{"data-namespace": consoleOtherNS}), "the other namespace is hidden")
		for _, row := range find(doc, "tr", map[string]string{"data-namespace": "*"}) {
			assert.Equal(t, consoleNS, must(attr(row, "data-namespace")))
		}
		assert.NotEmpty(t, find(doc, "p", map[string]string{"class": "note hidden-namespaces"}))
		b.screenshot(t, proxy.URL+"/", "services-one-namespace", 1400, 600)
		doc = b.dom(t, proxy.URL+"/services/inferenceservice/"+consoleOtherNS+"/sklearn-iris")
		assert.Contains(t, text(doc), "You may not read InferenceService "+consoleOtherNS+"/sklearn-iris.")
		// The list follows the namespace the user may watch.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxy.URL+"/live", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "a stream of the namespace the user may watch")
	})

	t.Run("a user bound to one namespace whose kubeconfig names none is asked for it", func(t *testing.T) {
		proxy := viewerConsole(t, sb.Env.Config, false)
		doc := b.dom(t, proxy.URL+"/")
		assert.NotEmpty(t, find(doc, "p", map[string]string{"class": "note need-namespace"}))
		assert.NotContains(t, text(doc), "No service you may read", "not told there is nothing, when nothing could be looked at")
		doc = b.dom(t, proxy.URL+"/?namespace="+consoleNS)
		assert.NotEmpty(t, find(doc, "tr", map[string]string{"data-namespace": consoleNS, "data-name": "sklearn-iris"}), "once named")
	})

	t.Run("live updates", func(t *testing.T) {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		hc := &http.Client{Jar: jar}
		resp, err := hc.Get(page("/"))
		require.NoError(t, err)
		resp.Body.Close()
		resp, err = hc.Get(srv.URL + "/live?kind=inferenceservice&namespace=" + consoleNS + "&name=xgboost-iris")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		events := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				events <- sc.Text()
			}
			close(events)
		}()
		waitChange := func(what string) {
			t.Helper()
			deadline := time.After(20 * time.Second)
			for {
				select {
				case line, ok := <-events:
					require.True(t, ok, "the stream ended before a change")
					if line == "event: change" {
						return
					}
				case <-deadline:
					t.Fatalf("no change event within 20 s of a change to %s", what)
				}
			}
		}
		// Quiet first: no change while nothing changes.
		quiet := time.After(2 * time.Second)
	wait:
		for {
			select {
			case line := <-events:
				require.NotEqual(t, "event: change", line, "a change with nothing changed")
			case <-quiet:
				break wait
			}
		}
		// A change to its Deployment alone (the service's status stays).
		dep := &appsv1.Deployment{}
		require.NoError(t, sb.Client.Get(context.Background(), types.NamespacedName{Namespace: consoleNS, Name: "xgboost-iris-predictor"}, dep))
		patch := client.MergeFrom(dep.DeepCopy())
		dep.Annotations = map[string]string{"console-test": "changed"}
		require.NoError(t, sb.Client.Patch(context.Background(), dep, patch))
		waitChange("its Deployment")
		// A change to the service.
		time.Sleep(1500 * time.Millisecond) // past the stream's coalescing
		isvc := &v1beta1.InferenceService{}
		require.NoError(t, sb.Client.Get(context.Background(), types.NamespacedName{Namespace: consoleNS, Name: "xgboost-iris"}, isvc))
		patch = client.MergeFrom(isvc.DeepCopy())
		isvc.Labels = map[string]string{"console-test": "changed"}
		require.NoError(t, sb.Client.Patch(context.Background(), isvc, patch))
		waitChange("the service")
	})
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// secretOf is the local console's secret, from the address it prints.
func secretOf(t *testing.T, s *console.Server, base string) string {
	t.Helper()
	_, secret, ok := strings.Cut(s.URL(base), "?token=")
	require.True(t, ok)
	return secret
}

func must(v string, ok bool) string {
	if !ok {
		return "<absent>"
	}
	return v
}

// viewerToken is a token of a ServiceAccount that may read services and
// their children in ns only: no right across namespaces, not even to list
// them.
func viewerToken(t *testing.T, ns string) string {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(sb.Env.Config)
	require.NoError(t, err)
	// Each subtest that acts as the viewer asks for a token: the account
	// and its grants are made by the first.
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{})
	require.NoError(t, ignoreExists(err))
	read := []string{"get", "list", "watch"}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "console-test-viewer"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"serving.serval.dev"}, Resources: []string{"*"}, Verbs: read},
			{APIGroups: []string{"", "apps", "autoscaling", "networking.k8s.io", "gateway.networking.k8s.io", "inference.networking.k8s.io"},
				Resources: []string{"*"}, Verbs: read},
		}}, metav1.CreateOptions{})
	require.NoError(t, ignoreExists(err))
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "console-test-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "viewer", Namespace: ns}}}, metav1.CreateOptions{})
	require.NoError(t, ignoreExists(err))
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "viewer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

// viewerConsole serves a console in front of which a proxy sends the token
// of a user who may view consoleNS only, as an authenticating proxy does;
// listNamespaces lets the console list namespace names for such a user.
func viewerConsole(t *testing.T, cfg *rest.Config, listNamespaces bool) *httptest.Server {
	t.Helper()
	token := viewerToken(t, consoleNS)
	fwd, err := console.New(console.Options{Config: cfg, Auth: console.AuthForwarded, ListNamespaces: listNamespaces})
	require.NoError(t, err)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+token)
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}

// ignoreExists is err, unless the object was there already.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
