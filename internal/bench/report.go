package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Print writes the result as a table, the ratios to the floor first.
func Print(w io.Writer, r *Result) {
	fmt.Fprintf(w, "serval bench: N=%d %ss (%s, %s), %d workers, webhooks off\n",
		r.N, r.Kind, r.Sample, r.Description, r.Workers)
	fmt.Fprintf(w, "machine: %d CPUs (%s), %d GiB, Linux %s, %s\n\n", r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemoryGiB, r.Machine.Kernel, r.Machine.Go)
	if len(r.Rounds) > 1 {
		printRounds(w, r)
	}
	s := r.Serval
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Floor != nil {
		fmt.Fprintln(tw, "\t× floor\tfloor\tServal")
		for _, row := range []struct {
			name        string
			floor, mine float64
		}{
			{"all Ready", r.Floor.Ready.P100, s.Ready.P100},
			{"90% Ready", r.Floor.Ready.P90, s.Ready.P90},
			{"50% Ready", r.Floor.Ready.P50, s.Ready.P50},
		} {
			fmt.Fprintf(tw, "%s\t%.2f\t%.1f s\t%.1f s\n", row.name, row.mine/row.floor, row.floor, row.mine)
		}
		fmt.Fprintf(tw, "kube-apiserver CPU\t%.2f\t%.1f s\t%.1f s\n", s.APIServerCPUSeconds/r.Floor.APIServerCPUSeconds,
			r.Floor.APIServerCPUSeconds, s.APIServerCPUSeconds)
		if slowdown, ok := r.machineSlowdown(); ok {
			fmt.Fprintf(tw, "the same work's CPU (see below)\t%.2f\t%.1f s\t%.1f s\n", slowdown,
				r.Floor.ComponentsCPUSeconds, s.ComponentsCPUSeconds)
		}
		fmt.Fprintf(tw, "writes / ISVC, besides its create\t\t%.1f\t%.2f\n", r.Floor.ObjectsPerISVC-1, s.WritesPerISVC)
	} else {
		fmt.Fprintf(tw, "all / 90%% / 50%% Ready\t%.1f / %.1f / %.1f s\n", s.Ready.P100, s.Ready.P90, s.Ready.P50)
		fmt.Fprintf(tw, "kube-apiserver CPU\t%.1f s\n", s.APIServerCPUSeconds)
		fmt.Fprintf(tw, "writes / ISVC\t%.2f\n", s.WritesPerISVC)
	}
	_ = tw.Flush()
	if _, ok := r.machineSlowdown(); ok {
		fmt.Fprintln(w, "(the same work: the controller-manager's, the scheduler's and kwok's CPU, for the same Deployments and pods in both runs; above 1, the machine ran slower than in the floor)")
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Serval\t\n")
	fmt.Fprintf(tw, "  requests / ISVC, Events apart\t%.2f (%s)\n", s.TotalRequestsPerISVC, joined(s.RequestsPerISVC))
	fmt.Fprintf(tw, "  Events / ISVC\t%.2f\n", s.EventsPerISVC)
	fmt.Fprintf(tw, "  manager peak RSS\t%.0f MiB (at the end: the binary's pages %.0f MiB, live heap %.0f MiB)\n", s.PeakRSSMiB, s.FileRSSMiB, s.LiveHeapMiB)
	fmt.Fprintf(tw, "  manager CPU\t%.1f s\n", s.CPUSeconds)
	fmt.Fprintf(tw, "  reconciles\t%.0f (%.2f / ISVC), p50 %.1f ms, p99 %.1f ms\n", s.Reconciles, s.Reconciles/float64(r.N), s.ReconcileP50Ms, s.ReconcileP99Ms)
	fmt.Fprintf(tw, "  requests in the idle %.0f s\t%.0f (%.0f writes)\n", s.IdleWindowSecond, s.IdleRequests, s.IdleWrites)
	_ = tw.Flush()
	fmt.Fprintf(w, "\nrequests / ISVC by verb and resource: %s\n", joined(s.ByVerbAndResource))
	if len(s.IdleByVerbAndResource) > 0 {
		fmt.Fprintf(w, "idle requests by verb and resource: %s\n", joined(s.IdleByVerbAndResource))
	}
	fmt.Fprintf(w, "manager flags: %s\n", strings.Join(s.ManagerArgs, " "))
	if len(s.ManagerEnv) > 0 {
		fmt.Fprintf(w, "manager environment: %s\n", strings.Join(s.ManagerEnv, " "))
	}
}

// printRounds lists every round's ratio, and how fast the machine ran in
// each, before the median round's table.
func printRounds(w io.Writer, r *Result) {
	var figures, control []string
	for _, round := range r.Rounds {
		if round.Ratio != nil {
			figures = append(figures, fmt.Sprintf("%.2f", round.Ratio.P100))
			if slowdown, ok := round.machineSlowdown(); ok {
				control = append(control, fmt.Sprintf("%.2f", slowdown))
			}
		} else {
			figures = append(figures, fmt.Sprintf("%.1f s", round.Serval.Ready.P100))
		}
	}
	what := ", each Serval then the floor: all Ready × floor"
	if r.Ratio == nil {
		what = " of Serval alone: all Ready after"
	}
	fmt.Fprintf(w, "%d rounds%s %s", len(r.Rounds), what, strings.Join(figures, ", "))
	if len(control) == len(figures) {
		fmt.Fprintf(w, " (the same work's CPU × floor %s)", strings.Join(control, ", "))
	}
	fmt.Fprintf(w, "; below, round %d, the median\n\n", r.MedianRound)
}

func joined(m map[string]float64) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
