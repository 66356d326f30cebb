//go:build !release

package main

import (
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/internal/bench"
	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/routerbench"
)

// developerCommands are the commands a developer runs from a checkout:
// they start a local cluster from bin/.
func developerCommands() []*cobra.Command { return []*cobra.Command{devCommand(), benchCommand()} }

// managerLogger is the in-process manager's logger: its errors only, unless
// -v asks for more.
func managerLogger(w io.Writer, verbosity int) logr.Logger {
	level := zapcore.ErrorLevel
	switch {
	case verbosity == 1:
		level = zapcore.InfoLevel
	case verbosity > 1:
		level = zapcore.DebugLevel
	}
	return zap.New(zap.WriteTo(w), zap.Level(level))
}

func devCommand() *cobra.Command {
	var o dev.Options
	var verbosity int
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local cluster on simulated nodes with Serval and a sample InferenceService",
		Long: `Starts a local Kubernetes (etcd, kube-apiserver, controller-manager, scheduler,
kwok nodes) from bin/, installs Serval's CRDs, the default runtimes and
serval-config, runs the manager in-process, applies a sample from
config/samples and shows it going Ready. Pods run on simulated nodes: no
container runs and no model is loaded. Stops everything on Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Out = cmd.OutOrStdout()
			ctrl.SetLogger(managerLogger(cmd.ErrOrStderr(), verbosity))
			return dev.Run(ctx, o)
		},
	}
	cmd.Flags().CountVarP(&verbosity, "verbose", "v", "show the manager's log on stderr: -v its info messages, -vv its debug messages (errors are always shown)")
	cmd.Flags().StringVar(&o.Sample, "sample", "sklearn", "the sample to apply: a file name in config/samples, without .yaml")
	cmd.Flags().BoolVar(&o.NoSample, "no-sample", false, "apply no sample")
	cmd.Flags().BoolVar(&o.ExitWhenReady, "exit-when-ready", false, "stop and exit 0 once the sample is Ready")
	cmd.Flags().DurationVar(&o.ReadyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for Ready")
	return cmd
}

func benchCommand() *cobra.Command {
	var o bench.Options
	var jsonPath string
	cmd := &cobra.Command{
		Use:   "bench [-n N] [--json FILE]",
		Short: "Measure Serval with N InferenceServices against the floor Kubernetes sets",
		Long: `Starts a fresh local cluster (2 simulated nodes; the controller-manager without
its HPA controller and without its client rate limit), runs
the manager binary as a process of its own (webhooks off), creates N copies of
config/samples/sklearn.yaml with 16 parallel workers, and records when they
go Ready, the manager's peak RSS and CPU, its API requests per
InferenceService, its reconciles, and its requests in an idle window after.
Then, on a second fresh cluster with no operator, the floor: the same
InferenceServices and the children Serval made for them, created directly.
Prints a table, ratios to the floor first; with --rounds, the round with
the median ratio, all rounds listed. Runs from the source tree, with
the control plane in bin/ (make controlplane).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Progress = cmd.ErrOrStderr()
			ctrl.SetLogger(managerLogger(cmd.ErrOrStderr(), 0))
			res, err := bench.Run(ctx, o)
			if err != nil {
				return err
			}
			bench.Print(cmd.OutOrStdout(), res)
			if jsonPath != "" {
				data, err := json.MarshalIndent(res, "", "  ")
				if err != nil {
					return err
				}
				return os.WriteFile(jsonPath, append(data, '\n'), 0o644)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&o.N, "n", "n", 100, "the number of services")
	cmd.Flags().StringVar(&o.Kind, "kind", "isvc", "what to create N of: isvc (KServe's sklearn sample as InferenceServices), llm (KServe's opt-125m CPU sample as LLMInferenceServices), or llm-router (the same with a managed route and the endpoint picker)")
	cmd.Flags().IntVar(&o.Workers, "workers", 16, "parallel creates")
	cmd.Flags().DurationVar(&o.IdleWindow, "idle", time.Minute, "how long to watch the manager once all are Ready")
	cmd.Flags().StringArrayVar(&o.ManagerArgs, "manager-arg", nil, "an extra flag for the manager, such as --max-concurrent-reconciles=8 (repeatable)")
	cmd.Flags().StringArrayVar(&o.ManagerEnv, "manager-env", nil, "a KEY=VALUE for the manager's environment alone, such as GOGC=50 (repeatable)")
	cmd.Flags().BoolVar(&o.SkipFloor, "no-floor", false, "skip the floor run")
	cmd.Flags().IntVar(&o.Rounds, "rounds", 1, "repeat Serval and the floor, alternately, this many times; the table shows the round with the median ratio")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "keep each cluster's directory, with the logs, under DIR/serval and DIR/floor (DIR/round-N/... with --rounds)")
	cmd.Flags().StringVar(&jsonPath, "json", "", "also write the result as JSON to this file")
	cmd.AddCommand(benchGraphCommand(), benchBackendCommand(), benchProxyCommand())
	return cmd
}

func benchGraphCommand() *cobra.Command {
	var o routerbench.Options
	var jsonPath string
	cmd := &cobra.Command{
		Use:   "graph [--router bin/router] [--json FILE]",
		Short: "Measure the InferenceGraph router against calling a backend directly",
		Long: `Starts a test backend (a process of its own that answers like a small model
server), then, for a 1-step and a 3-step Sequence and a 3-way Ensemble over
it, the router binary with that graph, and drives each with a closed-loop
load generator: at concurrency 1 for the added latency, at concurrency 16 for
the throughput, each right after the same load on the backend directly. All
on the same cores; the figures are the medians of the rounds. The reference
is httputil.ReverseProxy with a default Transport in its own process: what a
plain Go proxy costs on the machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			self, err := os.Executable()
			if err != nil {
				return err
			}
			o.BackendCommand = []string{self, "bench", "backend"}
			o.ProxyCommand = []string{self, "bench", "reverse-proxy"}
			o.Progress = cmd.ErrOrStderr()
			res, err := routerbench.Run(ctx, o)
			if err != nil {
				return err
			}
			routerbench.Print(cmd.OutOrStdout(), res)
			if jsonPath == "" {
				return nil
			}
			data, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return err
			}
			return os.WriteFile(jsonPath, append(data, '\n'), 0o644)
		},
	}
	cmd.Flags().StringVar(&o.RouterBinary, "router", "bin/router", "the router binary (make router)")
	cmd.Flags().DurationVar(&o.Duration, "duration", 3*time.Second, "the length of each measurement")
	cmd.Flags().IntVar(&o.Rounds, "rounds", 3, "rounds per graph (direct and routed, at concurrency 1 and 16); the figures are the medians")
	cmd.Flags().IntVar(&o.RouterCPUs, "router-cpus", 1, "the router's GOMAXPROCS, as Go sets it from the default CPU limit (1); 0 for the machine's CPUs")
	cmd.Flags().StringVar(&jsonPath, "json", "", "also write the result as JSON to this file")
	return cmd
}

// benchBackendCommand is the backend process of `serval bench graph`.
func benchBackendCommand() *cobra.Command {
	return &cobra.Command{
		Use: "backend ADDR", Hidden: true, Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return routerbench.ServeBackend(args[0]) },
	}
}

// benchProxyCommand is the reference of `serval bench graph`:
// httputil.ReverseProxy.
func benchProxyCommand() *cobra.Command {
	return &cobra.Command{
		Use: "reverse-proxy ADDR BACKEND", Hidden: true, Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error { return routerbench.ServeReverseProxy(args[0], args[1]) },
	}
}
