// Package routerbench measures the InferenceGraph router (`serval bench
// graph`): a test backend, the router binary with a graph over it and a
// closed-loop load generator, each a process of its own on the same cores,
// as KServe's router was measured. It reports, for a 1-step and a 3-step
// Sequence and a 3-way Ensemble, the router's added latency at concurrency
// 1, its throughput against calling the backend directly at concurrency 16,
// and its CPU and allocations per request.
package routerbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Options configure a run.
type Options struct {
	// RouterBinary is the router to measure (bin/router).
	RouterBinary string
	// BackendCommand starts the backend process; it must serve
	// NewBackend on the address it is given as its last argument.
	BackendCommand []string
	// ProxyCommand starts the reference: httputil.ReverseProxy with a
	// default Transport in a process of its own (ServeReverseProxy). Its
	// arguments: the address to listen on, then the backend's.
	ProxyCommand []string
	// Duration of each measurement (after a tenth more of warm-up).
	Duration time.Duration
	// Rounds is how many times each scenario is measured (3 by default);
	// the figures are the medians.
	Rounds int
	// RouterCPUs is the router's GOMAXPROCS: in a cluster, Go sets it from
	// the container's CPU limit, which for the router is 1 unless
	// serval-config's router.cpuLimit says otherwise. 0 leaves Go's default
	// (the machine's CPUs).
	RouterCPUs int
	// Progress receives a line per measurement; nil discards.
	Progress io.Writer
}

// Scenario is one graph measured: the medians over the rounds.
type Scenario struct {
	Name string `json:"name"`
	// Hops are the calls to the backend per request.
	Hops int `json:"hops"`
	// AddedP50 is the router's added latency at concurrency 1: the p50
	// through the graph less hops times the direct p50 measured just before.
	AddedP50 time.Duration `json:"addedP50"`
	// ThroughputRatio is the routed throughput at concurrency 16, times the
	// hops, over the direct throughput measured just before.
	ThroughputRatio float64 `json:"throughputRatio"`
	// P50 and PerSecond are the routed p50 at concurrency 1 and requests
	// per second at concurrency 16.
	P50       time.Duration `json:"p50"`
	PerSecond float64       `json:"requestsPerSecond"`
	// CPUPerRequest and AllocsPerRequest are the router process's.
	CPUPerRequest    time.Duration `json:"routerCPUPerRequest"`
	AllocsPerRequest float64       `json:"routerAllocsPerRequest"`
	// Rounds are the measurements the medians come from.
	Rounds []Round `json:"rounds"`
}

// Round is one round of a scenario: the backend directly and through the
// router, at concurrency 1 and 16, one right after the other, so that the
// ratios compare runs under the same conditions.
type Round struct {
	Direct1  LoadResult `json:"direct1"`
	Routed1  LoadResult `json:"routed1"`
	Direct16 LoadResult `json:"direct16"`
	Routed16 LoadResult `json:"routed16"`
}

// Result is a whole run.
type Result struct {
	Machine   string        `json:"machine"`
	Scenarios []Scenario    `json:"scenarios"`
	Duration  time.Duration `json:"durationPerMeasurement"`
	// RouterCPUs is the router's GOMAXPROCS ("default": the machine's).
	RouterCPUs string `json:"routerGOMAXPROCS"`
}

// Concurrency of the throughput measurement, as KServe's was measured.
const Concurrency = 16

// Run measures every scenario.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Duration == 0 {
		o.Duration = 3 * time.Second
	}
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	backendAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	backend := exec.CommandContext(ctx, o.BackendCommand[0], append(o.BackendCommand[1:], backendAddr)...)
	backend.Stderr = os.Stderr
	if err := backend.Start(); err != nil {
		return nil, fmt.Errorf("start the backend: %w", err)
	}
	defer func() { _ = backend.Process.Kill(); _ = backend.Wait() }()
	direct := "http://" + backendAddr + "/v1/models/m:predict"
	if err := waitServing(ctx, direct); err != nil {
		return nil, fmt.Errorf("the backend: %w", err)
	}
	res := &Result{Machine: machine(), Duration: o.Duration, RouterCPUs: "default"}
	if o.RouterCPUs > 0 {
		res.RouterCPUs = strconv.Itoa(o.RouterCPUs)
	}
	all := scenarios(direct)
	if len(o.ProxyCommand) > 0 {
		all = append([]scenario{{name: ReferenceScenario, hops: 1, proxy: true}}, all...)
	}
	for _, sc := range all {
		s, err := measure(ctx, o, sc, direct, backendAddr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		res.Scenarios = append(res.Scenarios, s)
	}
	return res, nil
}

// ReferenceScenario names the plain-Go reference in the results.
const ReferenceScenario = "httputil.ReverseProxy"

type scenario struct {
	name  string
	hops  int
	graph string
	// proxy: the reference, httputil.ReverseProxy instead of the router.
	proxy bool
}

func scenarios(backend string) []scenario {
	step := func(name, data string) string {
		s := `{"name":"` + name + `","serviceUrl":"` + backend + `"`
		if data != "" {
			s += `,"data":"` + data + `"`
		}
		return s + "}"
	}
	return []scenario{
		{name: "Sequence, 1 step", hops: 1, graph: `{"nodes":{"root":{"routerType":"Sequence","steps":[` + step("a", "") + `]}}}`},
		{name: "Sequence, 3 steps", hops: 3, graph: `{"nodes":{"root":{"routerType":"Sequence","steps":[` +
			step("a", "") + "," + step("b", "$response") + "," + step("c", "$response") + `]}}}`},
		{name: "Ensemble, 3 steps", hops: 3, graph: `{"nodes":{"root":{"routerType":"Ensemble","steps":[` +
			step("a", "") + "," + step("b", "") + "," + step("c", "") + `]}}}`},
	}
}

func measure(ctx context.Context, o Options, sc scenario, direct, backendAddr string) (Scenario, error) {
	addr, err := freeAddr()
	if err != nil {
		return Scenario{}, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return Scenario{}, err
	}
	cmd := exec.CommandContext(ctx, o.RouterBinary, "--graph-json="+sc.graph, "--addr="+addr, "--metrics-addr="+metricsAddr, "--drain-delay=0s")
	if sc.proxy {
		cmd = exec.CommandContext(ctx, o.ProxyCommand[0], append(o.ProxyCommand[1:], addr, backendAddr)...)
	}
	cmd.Stderr = io.Discard
	if o.RouterCPUs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(o.RouterCPUs))
	}
	if err := cmd.Start(); err != nil {
		return Scenario{}, fmt.Errorf("start the router: %w", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr + "/"
	if err := waitServing(ctx, url); err != nil {
		return Scenario{}, fmt.Errorf("the router: %w", err)
	}
	s := Scenario{Name: sc.name, Hops: sc.hops}
	var added, p50 []time.Duration
	var ratios, perSecond []float64
	var cpu time.Duration
	var allocs, requests float64
	for range o.Rounds {
		var r Round
		r.Direct1 = Drive(direct, 1, o.Duration)
		r.Routed1 = Drive(url, 1, o.Duration)
		r.Direct16 = Drive(direct, Concurrency, o.Duration)
		cpu0, err := processCPU(cmd.Process.Pid)
		if err != nil {
			return Scenario{}, err
		}
		var mallocs0, mallocs1 float64
		if !sc.proxy {
			if mallocs0, err = mallocs(metricsAddr); err != nil {
				return Scenario{}, err
			}
		}
		r.Routed16 = Drive(url, Concurrency, o.Duration)
		cpu1, _ := processCPU(cmd.Process.Pid)
		if !sc.proxy {
			mallocs1, _ = mallocs(metricsAddr)
		}
		// Drive warms up for a tenth of the duration before it counts.
		requests += float64(r.Routed16.Requests) * 1.1
		cpu += cpu1 - cpu0
		allocs += mallocs1 - mallocs0
		added = append(added, r.Routed1.P50-r.Direct1.P50*time.Duration(sc.hops))
		p50 = append(p50, r.Routed1.P50)
		perSecond = append(perSecond, r.Routed16.PerSecond)
		if r.Direct16.PerSecond > 0 {
			ratios = append(ratios, r.Routed16.PerSecond*float64(sc.hops)/r.Direct16.PerSecond)
		}
		s.Rounds = append(s.Rounds, r)
		fmt.Fprintf(o.Progress, "%s: direct %s, %s; routed %s, %s\n", sc.name, r.Direct1, r.Direct16, r.Routed1, r.Routed16)
	}
	s.AddedP50, s.P50 = median(added), median(p50)
	s.ThroughputRatio, s.PerSecond = median(ratios), median(perSecond)
	if requests > 0 {
		s.CPUPerRequest = time.Duration(float64(cpu) / requests)
		s.AllocsPerRequest = allocs / requests
	}
	return s, nil
}

func median[T time.Duration | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// Print writes the result as a table.
func Print(w io.Writer, r *Result) {
	fmt.Fprintf(w, "machine: %s; router GOMAXPROCS %s; medians of %d rounds of %s per measurement\n\n",
		r.Machine, r.RouterCPUs, len(r.Scenarios[0].Rounds), r.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\tp50 c=1\tadded p50\treq/s c=16\t× direct ÷ hops\trouter CPU / req\tallocs / req\t")
	for _, s := range r.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.2f\t%s\t%.0f\t\n", s.Name, s.P50.Round(time.Microsecond),
			s.AddedP50.Round(time.Microsecond), s.PerSecond, s.ThroughputRatio,
			s.CPUPerRequest.Round(100*time.Nanosecond), s.AllocsPerRequest)
	}
	_ = tw.Flush()
}

// ServeReverseProxy serves httputil.ReverseProxy with a default Transport
// on addr, in front of backend, until the process ends: the reference of a
// run, what a plain Go proxy costs on the machine.
func ServeReverseProxy(addr, backend string) error {
	target, err := url.Parse("http://" + backend)
	if err != nil {
		return err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{}
	return (&http.Server{Addr: addr, Handler: proxy, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe()
}

// ServeBackend serves NewBackend on addr until the process ends: the
// backend process of a run.
func ServeBackend(addr string) error {
	return (&http.Server{Addr: addr, Handler: NewBackend(), ReadHeaderTimeout: 10 * time.Second}).ListenAndServe()
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitServing(ctx context.Context, url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post(url, "application/json", strings.NewReader(string(BenchRequest)))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("not serving %s: %w", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processCPU is a process's user and system CPU time so far.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil // USER_HZ is 100
}

// mallocs reads go_memstats_mallocs_total from the router's metrics.
func mallocs(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_mallocs_total "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no go_memstats_mallocs_total in the router's metrics")
}

func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s)", numCPU(), model)
}

func numCPU() int { return runtime.NumCPU() }
