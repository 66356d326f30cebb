package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/sandbox"
)

var sb *sandbox.Sandbox

// TestMain starts one sandbox with Serval in it, as `serval dev` does: the
// upstream CRDs, the manager with its webhooks, the default runtimes.
func TestMain(m *testing.M) {
	// The in-process manager's errors only: the tests say what they check.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	sb, err = sandbox.Start(ctx, dev.SandboxOptions(os.Stderr))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done, err := dev.StartServal(ctx, sb, os.Stderr)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	cancel()
	<-done
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
	if err := sb.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; component logs in %s", what, sb.LogDir())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
