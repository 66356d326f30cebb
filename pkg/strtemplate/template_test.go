package strtemplate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleData() Data {
	return Data{
		"Name": "sklearn-iris", "Namespace": "models", "IngressDomain": "example.com", "Empty": "",
		"Labels":      map[string]string{"app": "iris", "team": "ml"},
		"Annotations": map[string]string{"serving.kserve.io/deploymentMode": "RawDeployment", "a-b": "dash"},
		"None":        map[string]string(nil),
		"Nested":      Data{"Inner": "deep", "Map": map[string]string{"k": "v"}},
	}
}

func TestExecute(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"KServe's domain template", "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}", "sklearn-iris-models.example.com"},
		{"KServe's path template", "/serving/{{ .Namespace }}/{{ .Name }}", "/serving/models/sklearn-iris"},
		{"a label", "--model={{.Labels.app}}", "--model=iris"},
		{"an annotation with dashes and dots", `{{index .Annotations "serving.kserve.io/deploymentMode"}}`, "RawDeployment"},
		{"a key index does not find", `[{{index .Labels "absent"}}]`, "[]"},
		{"trimmed spaces", "a {{- .Name -}} b", "asklearn-irisb"},
		{"if else", `{{if .Empty}}x{{else if .Name}}{{.Name}}{{else}}z{{end}}`, "sklearn-iris"},
		{"with", `{{with .Nested}}{{.Inner}}{{end}}`, "deep"},
		{"with else", `{{with .Empty}}x{{else}}none{{end}}`, "none"},
		{"range over a map in key order", `{{range $k, $v := .Labels}}{{$k}}={{$v}};{{end}}`, "app=iris;team=ml;"},
		{"range with break and continue", `{{range $i := 5}}{{if eq $i 1}}{{continue}}{{end}}{{if eq $i 3}}{{break}}{{end}}{{$i}}{{end}}`, "02"},
		{"range over nothing", `{{range .None}}x{{else}}empty{{end}}`, "empty"},
		{"variables", `{{$n := .Name}}{{$n = printf "%s!" $n}}{{$n}}`, "sklearn-iris!"},
		{"a pipeline", `{{.Name | printf "%q"}}`, `"sklearn-iris"`},
		{"comparisons", `{{and (eq .Name "sklearn-iris" "x") (ne 1 2) (lt 1 2) (le 2 2) (gt "b" "a") (ge 2.5 2.5)}}`, "true"},
		{"or returns its first true argument", `{{or .Empty .Namespace}}`, "models"},
		{"len and slice", `{{len .Labels}} {{slice .Name 0 7}} {{len .Name}}`, "2 sklearn 12"},
		{"a byte of a string", `{{index .Name 0}}`, "115"},
		{"urlquery", `{{urlquery "a b&c"}}`, "a+b%26c"},
		{"a whole map", `{{.Labels}}`, "map[app:iris team:ml]"},
		{"println", `{{println 1 "x"}}`, "1 x\n"},
		{"a comment", `a{{/* note */}}b`, "ab"},
		{"a chained field", `{{(.Nested).Map.k}}`, "v"},
		{"nil printed", `{{print nil}}`, "<nil>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse("t", tc.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := tmpl.Execute(sampleData())
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExecuteErrors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"an unknown field", "{{.Nmae}}", `template: t:1:2: executing "t" at <.Nmae>: map has no entry for key "Nmae"`},
		{"an unknown label", "{{.Labels.absent}}", `map has no entry for key "absent"`},
		{"a field of a string", "{{.Name.First}}", "can't evaluate field First in type string"},
		{"arguments to a field", `{{.Name "x"}}`, "can't give argument to non-function"},
		{"a comparison of a string and a number", `{{eq .Name 1}}`, "incompatible types for comparison"},
		{"printf without a format", `{{printf 1}}`, "wrong type for value; expected string; got int"},
		{"a slice out of range", `{{slice .Name 3 99}}`, "index out of range: 99"},
		{"range over a string", `{{range .Name}}{{end}}`, "range can't iterate over sklearn-iris"},
		{"if on nil", `{{if and nil}}x{{end}}`, "if/with can't use <nil>"},
		{"a fixed arity", `{{not 1 2}}`, "wrong number of args for not: want 1 got 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse("t", tc.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = tmpl.Execute(sampleData())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseRefusesWhatItCannotRun(t *testing.T) {
	for _, text := range []string{
		`{{define "x"}}a{{end}}{{template "x"}}`,
		`{{template "x"}}`,
		`{{block "x" .}}a{{end}}`,
		`{{html .Name}}`,
		`{{js .Name}}`,
		`{{call .Name}}`,
		`{{.Name`,
		`{{unknown}}`,
	} {
		if _, err := Parse("t", text); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", text)
		}
	}
}

// differential are templates that text/template and this package must
// render alike over sampleData, output or failure.
var differential = []string{
	"", "plain text", "{{.Name}}", "{{.Labels.app}}", "{{.Labels.absent}}", "{{.Absent}}",
	"{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}", "{{.Name.Sub}}", "{{.None.x}}",
	`{{index .Annotations "a-b"}}`, `{{index .Labels 1}}`, `{{index .Name 1}}`, `{{index .Name 99}}`, `{{index .Name -1}}`,
	`{{index nil}}`, `{{index .Nested "Inner"}}`, `{{index .Labels}}`, `{{index .Name "x"}}`,
	`{{len .Name}}`, `{{len .Labels}}`, `{{len .None}}`, `{{len 3}}`, `{{len nil}}`, `{{len .}}`,
	`{{slice .Name}}`, `{{slice .Name 2}}`, `{{slice .Name 2 4}}`, `{{slice .Name 4 2}}`, `{{slice .Name 1 2 3}}`, `{{slice .Labels 1}}`, `{{slice nil}}`,
	`{{eq 1 1}}`, `{{eq 1 2 1}}`, `{{eq "a" "a"}}`, `{{eq 1 1.0}}`, `{{eq 1.5 1.5}}`, `{{eq true true}}`, `{{eq .Labels .Labels}}`,
	`{{eq .None nil}}`, `{{eq nil nil}}`, `{{eq .Name nil}}`, `{{eq (index .Name 0) 115}}`, `{{eq .Labels nil}}`, `{{eq 1}}`,
	`{{ne 1 2}}`, `{{ne "a" "a"}}`, `{{ne 1 "a"}}`,
	`{{lt 1 2}}`, `{{lt "b" "a"}}`, `{{lt 1.5 2.5}}`, `{{lt true false}}`, `{{lt 1 "a"}}`, `{{lt nil 1}}`, `{{lt .Labels 1}}`, `{{lt (index .Name 0) 200}}`,
	`{{le 2 2}}`, `{{gt 3 2}}`, `{{ge "a" "b"}}`, `{{gt 1 "a"}}`,
	`{{and 1 0 2}}`, `{{and 1 2}}`, `{{or 0 "" .Name}}`, `{{or 0 ""}}`, `{{and}}`, `{{not .Empty}}`, `{{not .Labels}}`, `{{not}}`,
	`{{print 1 2 "a" "b" 3.5 true nil}}`, `{{printf "%s-%d" .Name 3}}`, `{{printf "%v" .Labels}}`, `{{println .Name}}`, `{{printf}}`,
	`{{urlquery .Name "x y"}}`, `{{urlquery "a/b?c"}}`, `{{urlquery}}`,
	`{{1}}`, `{{1.5}}`, `{{1e3}}`, `{{0x1F}}`, `{{'a'}}`, `{{true}}`, `{{"s"}}`, `{{nil}}`, `{{1 2}}`, `{{.}}`, `{{.Nested}}`,
	`{{.Name | printf "%s!"}}`, `{{.Name | len}}`, `{{"x" | .Name}}`, `{{"x" | 1}}`, `{{.Labels | len | printf "%d"}}`,
	`{{if .Name}}yes{{end}}`, `{{if .Empty}}yes{{else}}no{{end}}`, `{{if .None}}yes{{else}}no{{end}}`, `{{if 0}}a{{else if 1.5}}b{{end}}`,
	`{{with .Labels}}{{.app}}{{end}}`, `{{with $x := .Name}}{{$x}}{{.}}{{end}}`, `{{with .Empty}}a{{else with .Name}}{{.}}{{end}}`,
	`{{range .Labels}}{{.}},{{end}}`, `{{range $k, $v := .Annotations}}{{$k}}:{{$v}} {{end}}`, `{{range $v := .Labels}}{{$v}}{{end}}`,
	`{{range 3}}{{.}}{{end}}`, `{{range $i, $j := 3}}{{end}}`, `{{range -2}}x{{else}}none{{end}}`, `{{range .Name}}{{end}}`,
	`{{range .}}{{end}}`, `{{range $k, $v := .Nested}}{{$k}}{{end}}`, `{{range 4}}{{if eq . 2}}{{break}}{{end}}{{.}}{{end}}`,
	`{{$x := 1}}{{range $x = 3}}{{$x}}{{end}}{{$x}}`, `{{$k := ""}}{{$v := ""}}{{range $k, $v = .Labels}}{{end}}{{$k}}{{$v}}`,
	`{{$x := .Name}}{{if true}}{{$x := "inner"}}{{$x}}{{end}}{{$x}}`, `{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}`,
	`{{$.Name}}`, `{{with .Nested}}{{$.Name}}{{.Inner}}{{end}}`, `{{$.Labels.app}}`, `{{(.Nested).Inner}}`, `{{(.Name).X}}`, `{{(nil).X}}`,
	`{{.Nested.Map.k}}`, `{{.Nested.Map.x}}`, `{{.Nested.Inner.x}}`,
	`{{- .Name -}}   {{- .Namespace}}`, `{{/* c */}}x`, "{{`raw`}}", `{{"\t"}}`,
	`{{if $0 = 0}}{{end}}`, `{{$x := 1}}{{range $y = .Labels}}{{end}}`,
	`{{$x := and nil}}{{range $x}}x{{else}}empty{{end}}`, `{{range (index "\x03" 0)}}{{printf "%T%v" . .}}{{end}}`,
	`{{range $i, $j := (index "\x03" 0)}}{{end}}`, `{{range $k, $v := .Labels}}{{if eq $k "app"}}{{continue}}{{end}}{{$v}}{{end}}`,
}

// TestMatchesTextTemplate renders the differential set with both engines.
func TestMatchesTextTemplate(t *testing.T) {
	for _, text := range differential {
		compareWithTextTemplate(t, text)
	}
}

// unsupported matches templates text/template accepts and this package
// refuses, by design.
var unsupported = regexp.MustCompile(`\b(define|block|template|html|js|call)\b`)

// pointerVerb matches a printf verb that prints an address, which differs
// between two copies of the same data.
var pointerVerb = regexp.MustCompile(`%[^a-zA-Z%]*p`)

func compareWithTextTemplate(t *testing.T, text string) {
	t.Helper()
	want, wantParse, wantExec := renderWithTextTemplate(text)
	ours, err := Parse("t", text)
	if err != nil {
		if wantParse == nil && !unsupported.MatchString(text) {
			t.Errorf("%q: text/template parses it, this package: %v", text, err)
		}
		return
	}
	if wantParse != nil {
		t.Errorf("%q: this package parses it, text/template: %v", text, wantParse)
		return
	}
	got, err := ours.Execute(sampleData())
	switch {
	case err != nil && wantExec == nil:
		t.Errorf("%q: text/template renders %q, this package fails: %v", text, want, err)
	case err == nil && wantExec != nil:
		t.Errorf("%q: text/template fails (%v), this package renders %q", text, wantExec, got)
	case err == nil && got != want && !pointerVerb.MatchString(text):
		t.Errorf("%q: text/template renders %q, this package %q", text, want, got)
	}
}

func renderWithTextTemplate(text string) (out string, parseErr, execErr error) {
	tmpl, err := template.New("t").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err, nil
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, sampleData()); err != nil {
		return "", nil, err
	}
	return b.String(), nil, nil
}

func FuzzMatchesTextTemplate(f *testing.F) {
	for _, text := range differential {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		compareWithTextTemplate(t, text)
	})
}

// TestFuncsNullAndLists: functions of the caller's, a nil pointer of the
// data (Null) and lists behave as text/template's do for struct data.
func TestFuncsNullAndLists(t *testing.T) {
	funcs := Funcs{"suffix": func(args []any) (any, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("wrong number of args for suffix: want 2 got %d", len(args))
		}
		return fmt.Sprint(args[0]) + fmt.Sprint(args[1]), nil
	}}
	data := Data{"Name": "llama", "Parallelism": Null{}, "Ports": []any{8000, 8001}}
	tests := []struct{ text, want, err string }{
		{text: "{{ suffix .Name `-pool` }}", want: "llama-pool"},
		{text: "{{ if and .Parallelism .Parallelism.Tensor }}tp{{ end }}", want: ""},
		{text: "{{ if .Parallelism }}set{{ else }}unset{{ end }}", want: "unset"},
		{text: "{{ .Parallelism }}", want: "<nil>"},
		{text: "{{ .Parallelism.Tensor }}", err: "nil pointer evaluating field Tensor"},
		{text: "{{ len .Ports }} {{ index .Ports 1 }}", want: "2 8001"},
		{text: "{{ suffix .Name }}", err: "error calling suffix: wrong number of args for suffix: want 2 got 1"},
	}
	for _, tt := range tests {
		tmpl, err := ParseFuncs("t", tt.text, funcs)
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		got, err := tmpl.Execute(data)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.text, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
	if _, err := Parse("t", "{{ suffix .Name `x` }}"); err == nil {
		t.Error("a function of another template's is not known to Parse")
	}
}

// TestExecuteNoValueMatchesTextTemplate: with ExecuteNoValue, a missing
// key renders as text/template renders it by default (KServe's runtime
// placeholders and ingress templates set no missingkey option).
func TestExecuteNoValueMatchesTextTemplate(t *testing.T) {
	for _, text := range []string{
		"--model-envelope={{.Labels.serviceEnvelope}}",
		"{{.Annotations.absent}}-{{.Name}}",
		"{{.Nested.Absent}}",
		`{{index .Labels "absent"}}`,
		`{{printf "%s" .Labels.absent}}`,
		"{{if .Labels.absent}}x{{else}}y{{end}}",
		"{{.Labels.absent.deeper}}",
		`{{.Labels.absent | printf "%q"}}`,
		"{{.Labels.app}}",
	} {
		tmpl, err := template.New("t").Parse(text)
		require.NoError(t, err, text)
		var b bytes.Buffer
		wantErr := tmpl.Execute(&b, sampleData())
		ours, err := Parse("t", text)
		require.NoError(t, err, text)
		got, err := ours.ExecuteNoValue(sampleData())
		if wantErr != nil {
			assert.Error(t, err, "%q: text/template fails (%v)", text, wantErr)
			continue
		}
		require.NoError(t, err, text)
		assert.Equal(t, b.String(), got, text)
	}
	_, err := mustParse(t, "{{.Labels.absent}}").Execute(sampleData())
	assert.ErrorContains(t, err, `map has no entry for key "absent"`, "Execute keeps missingkey=error")
}

func mustParse(t *testing.T, text string) *Template {
	t.Helper()
	tmpl, err := Parse("t", text)
	require.NoError(t, err)
	return tmpl
}

func TestFields(t *testing.T) {
	tmpl := mustParse(t, `{{ .Name }}-{{ .Labels.team }}.{{ if .Annotations.zone }}{{ .Annotations.zone }}{{ end }}{{ index .Labels "x" }}{{ .Name | printf "%s" }}`)
	assert.Equal(t, [][]string{{"Name"}, {"Labels", "team"}, {"Annotations", "zone"}, {"Labels"}, {"Labels", "x"}}, tmpl.Fields())
}
