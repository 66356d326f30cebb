package observability

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	return root
}

// TestEveryQueryParses: every query of the dashboards (panels and
// variables) and of the alert rules parses with Prometheus's parser and
// names at least one metric.
func TestEveryQueryParses(t *testing.T) {
	qs, err := Queries(repoRoot(t))
	require.NoError(t, err)
	require.Greater(t, len(qs), 40, "the dashboards' and rules' queries")
	for _, q := range qs {
		expr, err := q.Parse()
		if !assert.NoError(t, err, "%s: %s", q.Where, q.Expr) {
			continue
		}
		assert.NotEmpty(t, MetricNames(expr), "%s names no metric", q.Where)
	}
}

// TestRuleFileIsValid: the rule file passes the checks `promtool check
// rules` makes (Prometheus's rulefmt), and every alert has a severity, a
// summary and a runbook section of docs/operations.md.
func TestRuleFileIsValid(t *testing.T) {
	root := repoRoot(t)
	_, errs := rulefmt.ParseFile(filepath.Join(root, RulesFile), false, model.UTF8Validation, Parser, slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	rules, err := Rules(root)
	require.NoError(t, err)
	require.Len(t, rules, 7)
	runbooks := runbookAnchors(t, root)
	for _, r := range rules {
		assert.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], r.Alert)
		assert.Contains(t, runbooks, r.Annotations["runbook_url"], "%s: its runbook is a section of docs/operations.md", r.Alert)
	}
}

// TestMetricNames: the names of nested and plain selectors, each once.
func TestMetricNames(t *testing.T) {
	expr, err := Query{Expr: `sum by (a) (rate(x_total{b="$namespace"}[$__rate_interval])) / sum(rate(x_total[5m])) + on() {__name__="y"}`}.Parse()
	require.NoError(t, err)
	assert.Equal(t, []string{"x_total", "y"}, MetricNames(expr))
	expr, err = Query{Expr: `label_values(serval_condition{namespace=~"$namespace"}, name)`}.Parse()
	require.NoError(t, err)
	assert.Equal(t, []string{"serval_condition"}, MetricNames(expr))
}
