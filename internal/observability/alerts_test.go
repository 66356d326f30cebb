package observability

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alertCase is one unit test of an alert rule, as promtool's: series
// loaded over time (promqltest's load syntax, one sample a minute), every
// rule evaluated each minute up to at, and the alert's instances firing
// then with their labels.
type alertCase struct {
	name   string
	alert  string
	series string
	at     time.Duration
	// want are the firing alerts, each "Alert{label=value,...}" with every
	// label sorted; summaries, when set, the summary of each in order.
	want      []string
	summaries []string
}

var alertCases = []alertCase{
	{
		name:   "manager down",
		alert:  "ServalManagerDown",
		series: `up{job="serval-metrics", instance="a"} 1 1 0 0 0 0 0 0 0 0`,
		at:     9 * time.Minute,
		want:   []string{`ServalManagerDown{severity=critical}`},
	},
	{
		name:   "manager down for less than 5 minutes",
		alert:  "ServalManagerDown",
		series: `up{job="serval-metrics", instance="a"} 1 1 1 1 1 0 0 0 0 0`,
		at:     9 * time.Minute,
	},
	{
		name:  "one of two managers up",
		alert: "ServalManagerDown",
		series: `up{job="serval-metrics", instance="a"} 0x10
up{job="serval-metrics", instance="b"} 1x10`,
		at: 9 * time.Minute,
	},
	{
		name:  "two managers, none leads",
		alert: "ServalNoLeader",
		series: `leader_election_master_status{job="serval-metrics", instance="a", name="serval"} 1 1 0 0 0 0 0 0 0 0
leader_election_master_status{job="serval-metrics", instance="b", name="serval"} 0x10`,
		at:   9 * time.Minute,
		want: []string{`ServalNoLeader{severity=critical}`},
	},
	{
		name:  "leadership moves",
		alert: "ServalNoLeader",
		series: `leader_election_master_status{job="serval-metrics", instance="a", name="serval"} 1 1 0 0 0 0 0 0 0 0
leader_election_master_status{job="serval-metrics", instance="b", name="serval"} 0 0 0 1 1 1 1 1 1 1`,
		at: 9 * time.Minute,
	},
	{
		name:  "a fifth of reconciles fail for 20 minutes",
		alert: "ServalReconcileErrors",
		series: `controller_runtime_reconcile_total{job="serval-metrics", controller="inferenceservice", result="success"} 0+80x40
controller_runtime_reconcile_total{job="serval-metrics", controller="inferenceservice", result="error"} 0+20x40
controller_runtime_reconcile_errors_total{job="serval-metrics", controller="inferenceservice"} 0+20x40
controller_runtime_reconcile_total{job="serval-metrics", controller="inferencegraph", result="success"} 0+100x40
controller_runtime_reconcile_errors_total{job="serval-metrics", controller="inferencegraph"} 0x40`,
		at:        30 * time.Minute,
		want:      []string{`ServalReconcileErrors{controller=inferenceservice,severity=warning}`},
		summaries: []string{"inferenceservice: 20% of reconciles fail."},
	},
	{
		name:  "a few errors",
		alert: "ServalReconcileErrors",
		series: `controller_runtime_reconcile_total{job="serval-metrics", controller="inferenceservice", result="success"} 0+99x40
controller_runtime_reconcile_errors_total{job="serval-metrics", controller="inferenceservice"} 0+1x40`,
		at: 30 * time.Minute,
	},
	{
		name:  "certificate expires in 3 days",
		alert: "ServalWebhookCertificateExpiring",
		// Ten minutes past the epoch plus three days, in seconds.
		series: `serval_webhook_certificate_expiry_timestamp_seconds{job="serval-metrics"} 259800x100`,
		at:     90 * time.Minute,
		want:   []string{`ServalWebhookCertificateExpiring{severity=warning}`},
	},
	{
		name:   "certificate expires in 60 days",
		alert:  "ServalWebhookCertificateExpiring",
		series: `serval_webhook_certificate_expiry_timestamp_seconds{job="serval-metrics"} 5184000x100`,
		at:     90 * time.Minute,
	},
	{
		name:  "a service not Ready for 20 minutes, its reason a label; a stopped one is not alerted",
		alert: "ServalServiceNotReady",
		series: `serval_condition{kind="InferenceService", namespace="team-a", name="iris", type="Ready", status="False", reason="NoSupportingRuntime"} 1x30
serval_condition{kind="InferenceService", namespace="team-a", name="ok", type="Ready", status="True", reason=""} 1x30
serval_condition{kind="LLMInferenceService", namespace="team-b", name="llm", type="Ready", status="Unknown", reason="ModelLoading"} _x20 1x10
serval_condition{kind="InferenceService", namespace="team-a", name="paused", type="Ready", status="False", reason="Stopped"} 1x30`,
		at:        25 * time.Minute,
		want:      []string{`ServalServiceNotReady{kind=InferenceService,name=iris,namespace=team-a,reason=NoSupportingRuntime,severity=warning}`},
		summaries: []string{"InferenceService team-a/iris has not been Ready for 15 minutes: NoSupportingRuntime."},
	},
	{
		name:  "a service whose reason changes stays alerting under its new reason only after 15 minutes",
		alert: "ServalServiceNotReady",
		series: `serval_condition{kind="InferenceService", namespace="team-a", name="iris", type="Ready", status="False", reason="ModelLoading"} 1x10
serval_condition{kind="InferenceService", namespace="team-a", name="iris", type="Ready", status="False", reason="PredictorFailed"} _x10 1x10`,
		at: 19 * time.Minute,
	},
	{
		name:  "a router answering a tenth with 5xx",
		alert: "ServalRouterErrors",
		series: `serval_router_requests_total{namespace="team-a", inferencegraph="chain", pod="chain-1", code="200"} 0+90x30
serval_router_requests_total{namespace="team-a", inferencegraph="chain", pod="chain-1", code="502"} 0+10x30
serval_router_requests_total{namespace="team-a", inferencegraph="fine", pod="fine-1", code="200"} 0+100x30`,
		at:   20 * time.Minute,
		want: []string{`ServalRouterErrors{inferencegraph=chain,namespace=team-a,severity=warning}`},
	},
	{
		name:  "a cache copy that failed",
		alert: "ServalModelCacheCopyFailed",
		series: `serval_model_cache_copy{kind="LocalModelCache", namespace="", name="llama", node="gpu-1", status="NodeDownloadError"} 1x20
serval_model_cache_copy{kind="LocalModelCache", namespace="", name="llama", node="gpu-2", status="NodeDownloaded"} 1x20`,
		at:        15 * time.Minute,
		want:      []string{`ServalModelCacheCopyFailed{kind=LocalModelCache,name=llama,node=gpu-1,severity=warning}`},
		summaries: []string{"LocalModelCache llama has no copy on node gpu-1: its download failed."},
	},
	{
		name:  "a copy that failed and then succeeded",
		alert: "ServalModelCacheCopyFailed",
		series: `serval_model_cache_copy{kind="LocalModelCache", namespace="", name="llama", node="gpu-1", status="NodeDownloadError"} 1x5
serval_model_cache_copy{kind="LocalModelCache", namespace="", name="llama", node="gpu-1", status="NodeDownloaded"} _x5 1x15`,
		at: 15 * time.Minute,
	},
}

// TestAlertRules evaluates the chart's alert rules over each case's series,
// minute by minute as Prometheus would, and compares the firing alerts.
func TestAlertRules(t *testing.T) {
	rs, err := Rules(repoRoot(t))
	require.NoError(t, err)
	for _, c := range alertCases {
		t.Run(c.name, func(t *testing.T) {
			st := promqltest.LoadedStorage(t, "load 1m\n"+indent(c.series))
			engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 1_000_000)
			query := rules.EngineQueryFunc(engine, st)
			var alerting []*rules.AlertingRule
			found := false
			for _, r := range rs {
				found = found || r.Alert == c.alert
				expr, err := Parser.ParseExpr(r.Expr)
				require.NoError(t, err, r.Alert)
				hold, err := model.ParseDuration(r.For)
				require.NoError(t, err, r.Alert)
				alerting = append(alerting, rules.NewAlertingRule(r.Alert, expr, time.Duration(hold), 0,
					labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true,
					slog.New(slog.DiscardHandler)))
			}
			require.True(t, found, "no alert %s", c.alert)
			base := time.Unix(0, 0).UTC()
			for ts := time.Duration(0); ts <= c.at; ts += time.Minute {
				for _, r := range alerting {
					_, err := r.Eval(context.Background(), 0, base.Add(ts), query, &url.URL{}, 0)
					require.NoError(t, err, r.Name())
				}
			}
			var got, summaries []string
			for _, r := range alerting {
				if r.Name() != c.alert {
					continue
				}
				for _, a := range r.ActiveAlerts() {
					if a.State != rules.StateFiring {
						continue
					}
					var ls []string
					a.Labels.Range(func(l labels.Label) {
						if l.Name != "alertname" {
							ls = append(ls, l.Name+"="+l.Value)
						}
					})
					got = append(got, fmt.Sprintf("%s{%s}", r.Name(), strings.Join(ls, ",")))
					summaries = append(summaries, a.Annotations.Get("summary"))
				}
			}
			slices.Sort(got)
			assert.Equal(t, c.want, got)
			if c.summaries != nil {
				assert.Equal(t, c.summaries, summaries)
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}

// runbookAnchors are the runbook URLs docs/operations.md has a section for:
// each "### Name" heading gives the anchor #name.
func runbookAnchors(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs/operations.md"))
	require.NoError(t, err)
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^### (\w+)$`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, "https://github.com/serval-dev/serval/blob/main/docs/operations.md#"+strings.ToLower(m[1]))
	}
	return out
}
