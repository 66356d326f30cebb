package clustertest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/operator"
)

const managerNamespace = "serval-system"

var (
	env *testenv.Environment
	k8s client.Client
	// writes are the manager's write requests (Events apart).
	writes testenv.WriteLog
)

// reconciles counts the finished reconciles of each graph: the evidence
// that a check for "no writes" watched the reconcile it means to.
var reconciles = testenv.NewReconciles()

func TestMain(m *testing.M) {
	ctrl.SetLogger(reconciles.Logger(zap.New(zap.WriteTo(os.Stderr), zap.Level(testenv.ManagerLogLevel())).GetSink()))
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: operator.Scheme()},
		func(e *testenv.Environment) {
			env, k8s = e, e.Client
			if err := startManager(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		})
}

func startManager() error {
	return env.StartManager(managerNamespace, writes.Wrap, func(ctx context.Context, cfg *rest.Config) (testenv.Starter, error) {
		return operator.New(ctx, cfg, operator.Options{Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0",
			RouterImage: "example.com/serval:test"})
	})
}

// eventually polls cond until it holds, or fails the test after 30 s.
var eventually = testenv.Eventually
