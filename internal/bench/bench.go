package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options configure a run.
type Options struct {
	// Kind is what a run creates N of: isvc (InferenceServices, the
	// default) or llm (LLMInferenceServices).
	Kind string
	// N is the number of services.
	N int
	// Workers create them in parallel (16 by default).
	Workers int
	// IdleWindow is how long the manager is watched once all are Ready, for
	// requests it should not send (a minute by default).
	IdleWindow time.Duration
	// ManagerArgs are extra flags for the manager (--max-concurrent-reconciles=8).
	ManagerArgs []string
	// ManagerEnv are KEY=VALUE entries added to the manager's environment
	// alone (GOGC=50).
	ManagerEnv []string
	// SkipFloor leaves out the floor run.
	SkipFloor bool
	// Rounds repeats the run (Serval, then the floor) this many times (1 by
	// default); the result is the round with the median ratio, all rounds
	// listed. The floor alone varies by ±15% from run to run on a small
	// machine, and a single round's ratio with it.
	Rounds int
	// Dir keeps each run's cluster directory (logs, the manager's included)
	// under Dir/serval and Dir/floor; temporary when empty.
	Dir string
	// Progress receives one line per step.
	Progress io.Writer
}

func (o *Options) defaults() {
	if o.Workers == 0 {
		o.Workers = 16
	}
	if o.IdleWindow == 0 {
		o.IdleWindow = time.Minute
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Rounds < 1 {
		o.Rounds = 1
	}
}

// Result is what a run measured; `serval bench --json` writes it.
type Result struct {
	// Kind, Sample and Description say what was created N times.
	Kind        string  `json:"kind"`
	Sample      string  `json:"sample"`
	Description string  `json:"description"`
	N           int     `json:"n"`
	Workers     int     `json:"workers"`
	Machine     Machine `json:"machine"`
	// Round holds the figures: of the one round, or of the round with the
	// median ratio (MedianRound, counted from 1) when there were several.
	Round
	// Rounds, when there were several, are every round's figures, in the
	// order run.
	Rounds      []Round `json:"rounds,omitempty"`
	MedianRound int     `json:"medianRound,omitempty"`
}

// Round is one round of a run: Serval, then the floor.
type Round struct {
	// Ratio is Serval's time to Ready over the floor's, per percentile.
	Ratio  *Percentiles  `json:"ratioToFloor,omitempty"`
	Floor  *FloorResult  `json:"floor,omitempty"`
	Serval *ServalResult `json:"serval"`
}

// allReady is what rounds are ordered by: the ratio to the floor of the
// time to all Ready, or that time itself without a floor.
func (r Round) allReady() float64 {
	if r.Ratio != nil {
		return r.Ratio.P100
	}
	return r.Serval.Ready.P100
}

// machineSlowdown is the same work's CPU in Serval's run over the floor's
// (see ServalResult.ComponentsCPUSeconds); false without a floor or the
// figures.
func (r Round) machineSlowdown() (float64, bool) {
	if r.Floor == nil || r.Floor.ComponentsCPUSeconds <= 0 {
		return 0, false
	}
	return r.Serval.ComponentsCPUSeconds / r.Floor.ComponentsCPUSeconds, true
}

// ServalResult is the run with Serval.
type ServalResult struct {
	// Ready is when the InferenceServices were Ready, from the first create.
	Ready Percentiles `json:"ready"`
	// PeakRSSMiB and CPUSeconds are the manager process's, over the run and
	// the idle window (CPU) and its whole life (RSS).
	PeakRSSMiB float64 `json:"managerPeakRSSMiB"`
	CPUSeconds float64 `json:"managerCPUSeconds"`
	// FileRSSMiB is, of the manager's resident memory at the end, what
	// files back: its binary's own pages, which do not grow with N.
	FileRSSMiB float64 `json:"managerFileRSSMiB"`
	// LiveHeapMiB is the heap the manager's last garbage collection found
	// live, at the end (go_gc_heap_live_bytes); Go lets the heap grow to
	// twice that before it collects again.
	LiveHeapMiB float64 `json:"managerLiveHeapMiB"`
	// APIServerCPUSeconds is kube-apiserver's CPU from the first create to
	// the last Ready.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	// ComponentsCPUSeconds is the controller-manager's, the scheduler's
	// and kwok's CPU over the same span: the same work as in the floor, so
	// that the ratio of the two says how fast the machine ran.
	ComponentsCPUSeconds float64 `json:"componentsCPUSeconds"`
	// RequestsPerISVC are the manager's API requests from the first create
	// to the last Ready, by verb, per InferenceService; Events apart.
	RequestsPerISVC map[string]float64 `json:"requestsPerISVC"`
	// TotalRequestsPerISVC and WritesPerISVC sum them (writes: create,
	// update, patch, delete).
	TotalRequestsPerISVC float64 `json:"totalRequestsPerISVC"`
	WritesPerISVC        float64 `json:"writesPerISVC"`
	// ByVerbAndResource are the requests per InferenceService by "verb
	// resource", Events included.
	ByVerbAndResource map[string]float64 `json:"requestsPerISVCByVerbAndResource"`
	// EventsPerISVC are the Events the manager wrote, per InferenceService.
	EventsPerISVC float64 `json:"eventsPerISVC"`
	// Reconciles, with their time, over the same span.
	Reconciles       float64 `json:"reconciles"`
	ReconcileP50Ms   float64 `json:"reconcileP50Ms"`
	ReconcileP99Ms   float64 `json:"reconcileP99Ms"`
	IdleWindowSecond float64 `json:"idleWindowSeconds"`
	// IdleRequests and IdleWrites are the manager's requests in the idle
	// window after the last Ready (Events included).
	IdleRequests float64 `json:"idleRequests"`
	IdleWrites   float64 `json:"idleWrites"`
	// IdleByVerbAndResource are the idle window's requests by "verb
	// resource", for when they are not zero.
	IdleByVerbAndResource map[string]float64 `json:"idleRequestsByVerbAndResource"`
	// ManagerArgs are the flags the manager ran with.
	ManagerArgs []string `json:"managerArgs"`
	// ManagerEnv are the entries added to the manager's environment.
	ManagerEnv []string `json:"managerEnv,omitempty"`
}

// FloorResult is the run without an operator: the same objects created
// directly.
type FloorResult struct {
	// Ready is when each InferenceService's Deployments were available,
	// from the first create.
	Ready Percentiles `json:"ready"`
	// ObjectsPerISVC is what was created per InferenceService: itself and
	// the children Serval made for it.
	ObjectsPerISVC float64 `json:"objectsPerISVC"`
	// APIServerCPUSeconds and ComponentsCPUSeconds are as in ServalResult,
	// from the first create to the last Deployment available.
	APIServerCPUSeconds  float64 `json:"apiServerCPUSeconds"`
	ComponentsCPUSeconds float64 `json:"componentsCPUSeconds"`
}

// Run measures Serval with o.N InferenceServices, then the floor, o.Rounds
// times.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	if o.N < 1 {
		return nil, fmt.Errorf("N must be at least 1")
	}
	for _, e := range o.ManagerEnv {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return nil, fmt.Errorf("manager environment %q: want KEY=VALUE", e)
		}
	}
	subj, err := subjectOf(o.Kind)
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: subj.kind, Sample: subj.sample, Description: subj.description, N: o.N, Workers: o.Workers, Machine: describeMachine()}
	var rounds []Round
	for i := range o.Rounds {
		ro := o
		if o.Rounds > 1 {
			fmt.Fprintf(o.Progress, "bench: round %d of %d\n", i+1, o.Rounds)
			if o.Dir != "" {
				ro.Dir = filepath.Join(o.Dir, fmt.Sprintf("round-%d", i+1))
			}
		}
		round, err := runRound(ctx, ro)
		if err != nil {
			return nil, err
		}
		rounds = append(rounds, round)
	}
	median := medianRound(rounds)
	res.Round = rounds[median]
	if len(rounds) > 1 {
		res.Rounds, res.MedianRound = rounds, median+1
	}
	return res, nil
}

// runRound runs Serval, then the floor.
func runRound(ctx context.Context, o Options) (Round, error) {
	serval, children, err := runServal(ctx, o)
	if err != nil {
		return Round{}, fmt.Errorf("the run with Serval: %w", err)
	}
	if o.SkipFloor {
		return Round{Serval: serval}, nil
	}
	floor, err := runFloor(ctx, o, children)
	if err != nil {
		return Round{}, fmt.Errorf("the floor: %w", err)
	}
	return Round{Serval: serval, Floor: floor, Ratio: &Percentiles{
		P50:  serval.Ready.P50 / floor.Ready.P50,
		P90:  serval.Ready.P90 / floor.Ready.P90,
		P100: serval.Ready.P100 / floor.Ready.P100,
	}}, nil
}

// medianRound is the index of the round with the median time to all Ready
// (the lower of the two middle ones for an even count).
func medianRound(rounds []Round) int {
	order := make([]int, len(rounds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rounds[order[a]].allReady() < rounds[order[b]].allReady() })
	return order[(len(order)-1)/2]
}

// readyTimeout bounds a run's wait for Ready: generous, since a slow machine
// is not a failure, but finite.
func readyTimeout(n int) time.Duration { return 3*time.Minute + time.Duration(n)*300*time.Millisecond }
