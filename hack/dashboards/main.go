// Command dashboards writes the Grafana dashboards the chart ships
// (charts/serval/dashboards/*.json) from the short definitions below: one
// place for the layout, the datasource and the variables every panel shares,
// so that a panel is a title and its queries. `make manifests` runs it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ds is the datasource every panel and variable reads: the dashboard's
// datasource variable, so that one import serves any Prometheus.
var ds = map[string]string{"type": "prometheus", "uid": "${datasource}"}

// query is one PromQL expression of a panel and its legend.
type query struct{ expr, legend string }

// panel is a time series (or a table, or a stat) of one or more queries.
type panel struct {
	title, unit, kind, description string
	queries                        []query
}

func ts(title, unit, description string, qs ...query) panel {
	return panel{title: title, unit: unit, kind: "timeseries", description: description, queries: qs}
}

func table(title, description string, qs ...query) panel {
	return panel{title: title, kind: "table", description: description, queries: qs}
}

func stat(title, unit, description string, qs ...query) panel {
	return panel{title: title, unit: unit, kind: "stat", description: description, queries: qs}
}

// row is a titled row of panels, laid out two or three to a line.
type row struct {
	title  string
	panels []panel
}

// variable is a query variable over one label of one metric, filtered by
// the variables before it.
type variable struct{ name, label, query string }

type dashboard struct {
	file, uid, title, description string
	variables                     []variable
	rows                          []row
}

func (d dashboard) json() map[string]any {
	vars := []any{map[string]any{
		"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
		"current": map[string]any{}, "hide": 0,
	}}
	for _, v := range d.variables {
		vars = append(vars, map[string]any{
			"name": v.name, "label": v.label, "type": "query", "datasource": ds,
			"query":      map[string]any{"query": v.query, "refId": v.name},
			"definition": v.query, "refresh": 2, "includeAll": true, "multi": true,
			"allValue": ".*", "current": map[string]any{"text": "All", "value": "$__all"}, "sort": 1,
		})
	}
	var panels []any
	id, y := 1, 0
	for _, r := range d.rows {
		panels = append(panels, map[string]any{"id": id, "type": "row", "title": r.title, "collapsed": false,
			"gridPos": map[string]int{"x": 0, "y": y, "w": 24, "h": 1}, "panels": []any{}})
		id++
		y++
		// Two or three panels to a line, a table alone on its line.
		width := 12
		if len(r.panels)%3 == 0 {
			width = 8
		}
		x := 0
		for _, p := range r.panels {
			w := width
			if p.kind == "table" {
				w = 24
			}
			if x+w > 24 {
				x, y = 0, y+8
			}
			var targets []any
			for j, q := range p.queries {
				t := map[string]any{"refId": string(rune('A' + j)), "expr": q.expr, "legendFormat": q.legend, "datasource": ds}
				if p.kind == "table" {
					t["instant"] = true
					t["format"] = "table"
				}
				targets = append(targets, t)
			}
			defaults := map[string]any{}
			if p.unit != "" {
				defaults["unit"] = p.unit
			}
			panels = append(panels, map[string]any{
				"id": id, "type": p.kind, "title": p.title, "description": p.description, "datasource": ds,
				"gridPos":     map[string]int{"x": x, "y": y, "w": w, "h": 8},
				"targets":     targets,
				"fieldConfig": map[string]any{"defaults": defaults, "overrides": []any{}},
			})
			id++
			x += w
		}
		y += 8
	}
	return map[string]any{
		"uid": d.uid, "title": d.title, "description": d.description,
		"tags": []string{"serval"}, "editable": true, "schemaVersion": 39, "version": 1,
		"time": map[string]string{"from": "now-6h", "to": "now"}, "refresh": "30s", "timezone": "",
		"templating": map[string]any{"list": vars}, "panels": panels,
		"annotations": map[string]any{"list": []any{}},
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dashboards DIR")
		os.Exit(2)
	}
	for _, d := range dashboards {
		data, err := json.MarshalIndent(d.json(), "", "  ")
		if err == nil {
			err = os.WriteFile(filepath.Join(os.Args[1], d.file), append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
