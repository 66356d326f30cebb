package testenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Starter is a manager, as far as StartManager needs it.
type Starter interface {
	Start(ctx context.Context) error
}

// StartManager creates the manager's namespace, then runs the manager
// newManager makes on a copy of the environment's config whose transport
// wrap (when set) wraps. The environment stops it when it stops; a
// manager that fails ends the test binary, naming why.
func (e *Environment) StartManager(namespace string, wrap func(http.RoundTripper) http.RoundTripper,
	newManager func(ctx context.Context, cfg *rest.Config) (Starter, error)) error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		cancel()
		return err
	}
	cfg := rest.CopyConfig(e.Config)
	if wrap != nil {
		cfg.WrapTransport = wrap
	}
	mgr, err := newManager(ctx, cfg)
	if err != nil {
		cancel()
		return err
	}
	e.AddCleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
			os.Exit(1)
		}
	}()
	return nil
}

// ManagerLogLevel keeps a manager under test quiet, errors apart, unless
// SERVAL_TEST_LOG is set.
func ManagerLogLevel() zapcore.Level {
	if os.Getenv("SERVAL_TEST_LOG") != "" {
		return zapcore.Level(-2)
	}
	return zapcore.ErrorLevel
}

// Eventually polls cond until it holds, or fails the test after 30 s.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
