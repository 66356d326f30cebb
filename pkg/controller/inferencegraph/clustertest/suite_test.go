package clustertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	ctrl.SetLogger(reconciles.Logger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())).GetSink()))
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	env.AddCleanup(func() { cancel(); <-done })
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}); err != nil {
		return err
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = writes.Wrap
	mgr, err := operator.New(ctx, cfg, operator.Options{Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0",
		RouterImage: "example.com/serval:test"})
	if err != nil {
		return err
	}
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
			os.Exit(1)
		}
	}()
	return nil
}

// zapLevel keeps the manager quiet unless SERVAL_TEST_LOG is set.
func zapLevel() zapcore.Level {
	if os.Getenv("SERVAL_TEST_LOG") != "" {
		return zapcore.Level(-2)
	}
	return zapcore.ErrorLevel
}

// eventually polls cond until it holds, or fails the test after 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
