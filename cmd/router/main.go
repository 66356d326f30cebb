// Command router is the InferenceGraph data plane: it serves one graph,
// given as JSON, over HTTP/1.1 and h2c.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/serval-dev/serval/pkg/router"
	"github.com/serval-dev/serval/pkg/version"
)

func main() {
	var c router.ServerConfig
	var graphJSON, graphFile, propagate string
	flag.StringVar(&graphJSON, "graph-json", "", "The InferenceGraph spec, as JSON.")
	flag.StringVar(&graphFile, "graph-file", "", "A file holding the InferenceGraph spec as JSON (instead of --graph-json).")
	flag.StringVar(&c.Addr, "addr", ":8080", "Address the graph is served on.")
	flag.StringVar(&c.MetricsAddr, "metrics-addr", ":9090", `Address of the Prometheus metrics (/metrics); "0" disables.`)
	flag.StringVar(&propagate, "propagate-headers", "", `Comma-separated request headers passed on to every step; a name ending in "*" is a prefix.`)
	c.RegisterFlags(flag.CommandLine)
	flag.DurationVar(&c.DrainDelay, "drain-delay", 5*time.Second, "On SIGTERM, how long readiness fails before the listener closes, so that the router leaves its Service first.")
	flag.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "On SIGTERM, after the drain delay, how long requests in flight may take to finish (with the drain delay, within the pod's default 30 s grace period).")
	flag.BoolVar(&c.Pprof, "pprof", false, "Serve Go's profiles at /debug/pprof/ on the metrics address.")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String())
		return
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if propagate != "" {
		c.Options.PropagateHeaders = strings.Split(propagate, ",")
	}
	data := []byte(graphJSON)
	if graphFile != "" {
		var err error
		if data, err = os.ReadFile(graphFile); err != nil {
			log.Error("Read the graph", "error", err)
			os.Exit(2)
		}
	}
	spec, err := router.Parse(data)
	if err != nil {
		log.Error("The graph is invalid", "error", err)
		os.Exit(2)
	}
	c.Spec = spec
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	if err := router.Serve(c, stop, log); err != nil {
		log.Error("The router stopped with an error", "error", err)
		os.Exit(1)
	}
}
