// Package observability reads what the chart ships for Prometheus and
// Grafana (the dashboards, the alert rules) and the metric names the docs
// list as upstream, so that tests can check every query: that it parses
// with Prometheus's own parser, and that each metric it names is one a
// Serval binary exports or one the docs name as another project's.
package observability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// Paths below the repository's root.
const (
	DashboardsDir = "charts/serval/dashboards"
	RulesFile     = "charts/serval/rules/alerts.yaml"
	DocsFile      = "docs/observability.md"
)

// Query is one PromQL expression the chart ships, and where.
type Query struct {
	// Where names the file and the panel, variable or alert.
	Where string
	// Expr is the expression as written, Grafana's variables included.
	Expr string
}

// grafanaVars are the variables Grafana substitutes before a query reaches
// Prometheus, with values of the same syntax: a range for the interval,
// regular expressions for the dashboards' own variables (inside quotes).
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// labelValues is Grafana's variable query label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// Parser is the PromQL parser with Prometheus's default options, as a
// server without feature flags has it.
var Parser = parser.NewParser(parser.Options{})

// Parse parses q as Prometheus would once Grafana has substituted its
// variables; a variable query's selector is parsed alone.
func (q Query) Parse() (parser.Expr, error) {
	expr := grafanaVars.Replace(q.Expr)
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	return Parser.ParseExpr(expr)
}

// MetricNames are the metric names expr selects, sorted, each once.
func MetricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			if name == "" {
				for _, m := range vs.LabelMatchers {
					if m.Name == "__name__" {
						name = m.Value
					}
				}
			}
			if name != "" {
				names = append(names, name)
			}
		}
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names)
}

// Queries reads every query of the dashboards and the alert rules.
func Queries(root string) ([]Query, error) {
	files, err := filepath.Glob(filepath.Join(root, DashboardsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no dashboards in %s", DashboardsDir)
	}
	var out []Query
	for _, f := range files {
		qs, err := dashboardQueries(f)
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
	}
	rules, err := Rules(root)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		out = append(out, Query{Where: RulesFile + ": " + r.Alert, Expr: r.Expr})
	}
	return out, nil
}

func dashboardQueries(file string) ([]Query, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d struct {
		Templating struct {
			List []struct {
				Name, Type, Definition string
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	base := filepath.Base(file)
	var out []Query
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			out = append(out, Query{Where: base + ": variable " + v.Name, Expr: v.Definition})
		}
	}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, Query{Where: base + ": " + p.Title, Expr: t.Expr})
		}
	}
	return out, nil
}

// Rule is one alerting rule of the rule file.
type Rule struct {
	Alert, Expr, For string
	Labels           map[string]string
	Annotations      map[string]string
}

// Rules reads the alerting rules of the chart's rule file.
func Rules(root string) ([]Rule, error) {
	data, err := os.ReadFile(filepath.Join(root, RulesFile))
	if err != nil {
		return nil, err
	}
	var f struct {
		Groups []struct {
			Name  string
			Rules []Rule
		}
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", RulesFile, err)
	}
	var out []Rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// upstreamRow is a row of the docs' table of upstream metrics: the name in
// backquotes in the first cell.
var upstreamRow = regexp.MustCompile("^\\| `([a-zA-Z_:][a-zA-Z0-9_:]*)` \\|")

// Upstream are the metric names docs/observability.md lists as other
// projects' (under its heading "Upstream metrics"): Prometheus's own,
// controller-runtime's, vLLM's, the endpoint picker's.
func Upstream(root string) (map[string]bool, error) {
	f, err := os.Open(filepath.Join(root, DocsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "Upstream metrics")
			continue
		}
		if m := upstreamRow.FindStringSubmatch(line); in && m != nil {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s lists no upstream metrics", DocsFile)
	}
	return names, sc.Err()
}
