package clustertest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/activator/kedascaler"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// hostIP is an address of this machine that is not loopback (an
// EndpointSlice cannot name 127.0.0.1).
func hostIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address to point an EndpointSlice at")
	return ""
}

// serveOn serves h on every address, returning the port.
func serveOn(t *testing.T, h http.Handler) int {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// slice is an EndpointSlice of service with one ready endpoint.
func slice(ns, name, service, managedBy, ip string, port int) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: managedBy, v1beta1.ComponentLabel: "predictor"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port))}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
}

// The component the tests scale from zero, and the activator's own Service.
var (
	component = types.NamespacedName{Namespace: "team-a", Name: "iris-predictor"}
	self      = types.NamespacedName{Namespace: "serval-system", Name: "serval-activator"}
)

// rig is an activator serving on this machine's address, its push scaler
// and its controllers, in a cluster with the component's namespace, the
// activator's own endpoint and the component's Service.
type rig struct {
	a *activator.Activator
	// ip and port reach the activator; scaler is its push scaler.
	ip     string
	port   int
	scaler string
}

// startRig starts the rig, its controllers acting as cfg's user.
func startRig(ctx context.Context, t *testing.T, k8s client.Client, cfg *rest.Config, limits activator.Limits) *rig {
	t.Helper()
	r := &rig{ip: hostIP(t)}
	hosts := activator.NewHosts()
	r.a = activator.New(limits, hosts.Resolve, nil, nil)
	r.port = serveOn(t, r.a)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	kedascaler.Register(gs, r.a)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	r.scaler = ln.Addr().String()

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: k8s.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	require.NoError(t, err)
	require.NoError(t, (&activator.Cluster{Client: mgr.GetClient(), Activator: r.a, Hosts: hosts, Self: self, Port: int32(r.port)}).SetupWithManager(mgr))
	go func() { _ = mgr.Start(ctx) }()

	for _, ns := range []string{self.Namespace, component.Namespace} {
		require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	require.NoError(t, k8s.Create(ctx, slice(self.Namespace, self.Name+"-x", self.Name, "endpointslice-controller.k8s.io", r.ip, r.port)))
	require.NoError(t, k8s.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: component.Namespace, Name: component.Name,
		Labels:      map[string]string{v1beta1.ScaleFromZeroLabel: "true", v1beta1.ComponentLabel: "predictor"},
		Annotations: map[string]string{v1beta1.HostsAnnotation: "iris-team-a.example.com"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "iris"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}))
	return r
}

// send sends n requests for host at once, each with its index as body;
// the returned function waits for them and gives their statuses.
func (r *rig) send(n int, host string) func() []int {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, "http://"+net.JoinHostPort(r.ip, strconv.Itoa(r.port)), strings.NewReader(fmt.Sprint(i)))
			req.Host = host
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
				statuses[i] = resp.StatusCode
			}
		})
	}
	return func() []int { wg.Wait(); return statuses }
}

// replica is a model server on this machine that counts the requests it
// gets by body.
type replica struct {
	port int
	mu   sync.Mutex
	seen map[string]int
}

func startReplica(t *testing.T) *replica {
	rp := &replica{seen: map[string]int{}}
	rp.port = serveOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rp.mu.Lock()
		rp.seen[string(body)]++
		rp.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	return rp
}

// servedEachOnce checks that every request was answered 200 and reached
// the replica exactly once.
func (rp *replica) servedEachOnce(t *testing.T, statuses []int) {
	t.Helper()
	for i, s := range statuses {
		require.Equal(t, http.StatusOK, s, "request %d", i)
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	require.Len(t, rp.seen, len(statuses))
	for body, times := range rp.seen {
		require.Equal(t, 1, times, "request %s reached the replica once", body)
	}
}
