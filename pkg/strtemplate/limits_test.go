package strtemplate

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsStopTemplateBombs(t *testing.T) {
	cases := []struct {
		name, text string
		bound      Bound
	}{
		{"the bomb of issue 44", `{{ range 20000000 }}aaaaaaaaaa{{ end }}`, BoundOutputBytes},
		{"a long range that writes nothing", `{{ range 20000000 }}{{ end }}`, BoundRangeIterations},
		{"output past the bound", `{{ range 9000 }}aaaaaaaaaa{{ end }}`, BoundOutputBytes},
		{"nested ranges", `{{ range 100 }}{{ range 100 }}{{ range 100 }}x{{ end }}{{ end }}{{ end }}`, BoundRangeIterations},
		{"a printf width", `{{ printf "%01000000000d" 1 }}`, BoundFormatWidth},
		{"a printf precision", `{{ printf "%.999999999f" 1.0 }}`, BoundFormatWidth},
		{"a width too large for an int", `{{ printf "%099999999999999999999999d" 1 }}`, BoundFormatWidth},
		{"a width on a map pads every element", `{{ printf "%1000v" .Labels }}`, BoundFormatWidth},
		{"a small width repeated past the bound", `{{ printf "` + strings.Repeat("%[1]1000v", 100) + `" 1 }}`, BoundOutputBytes},
		{"an operand repeated past the bound", `{{ printf "` + strings.Repeat("%[1]v", 3000) + `" .Labels }}`, BoundOutputBytes},
		{"print of a large value", `{{ print .Labels .Labels .Labels }}`, BoundOutputBytes},
		{"urlquery of a large value", `{{ urlquery .Labels }}`, BoundOutputBytes},
		{"an action that prints a large value", `{{ .Labels }}{{ .Labels }}{{ .Labels }}`, BoundOutputBytes},
		{"doubling a variable", `{{ $a := "aaaaaaaaaaaaaaaa" }}{{ range 40 }}{{ $a = print $a $a }}{{ end }}{{ len $a }}`, BoundOutputBytes},
		{"doubling through printf", `{{ $a := "aaaaaaaaaaaaaaaa" }}{{ range 40 }}{{ $a = printf "%s%s" $a $a }}{{ end }}`, BoundOutputBytes},
		{"steps without output", `{{ range 9000 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ if 1 }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}`, BoundSteps},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse("env X", tc.text)
			require.NoError(t, err)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = tmpl.Execute(Data{"Labels": manyLabels(2000)})
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			var limit *LimitError
			require.True(t, errors.As(err, &limit), "want a LimitError, got %v", err)
			assert.Equal(t, tc.bound, limit.Bound)
			assert.Contains(t, err.Error(), "serval-config templates."+string(tc.bound))
			assert.Contains(t, err.Error(), "env X:1:")
			// No render allocates more than a few times its output bound.
			t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated")
		})
	}
}

// manyLabels is n labels of 10 bytes each: a map of 20 KiB, within any
// object a namespace user may write.
func manyLabels(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("k%04d", i)] = "vvvvv"
	}
	return m
}

func TestLimitsKeepOrdinaryTemplates(t *testing.T) {
	tmpl, err := Parse("t", `{{ range $k, $v := .Labels }}{{ $k }}={{ $v }},{{ end }}{{ printf "%-10s|" .Name }}`)
	require.NoError(t, err)
	out, err := tmpl.Execute(sampleData())
	require.NoError(t, err)
	assert.Equal(t, "app=iris,team=ml,sklearn-iris|", out)

	exact, err := Parse("t", `{{ range 64 }}{{ printf "%1024s" "" }}{{ end }}`)
	require.NoError(t, err)
	out, err = exact.Execute(Data{})
	require.NoError(t, err, "exactly the bound is within it")
	assert.Len(t, out, 64<<10)
}

func TestWithLimits(t *testing.T) {
	tmpl, err := Parse("t", `{{ range 20 }}ab{{ end }}`)
	require.NoError(t, err)
	_, err = tmpl.WithLimits(Limits{MaxOutputBytes: 39}).Execute(Data{})
	var limit *LimitError
	require.ErrorAs(t, err, &limit)
	assert.Equal(t, 39, limit.Limit)
	_, err = tmpl.WithLimits(Limits{MaxRangeIterations: 19}).ExecuteNoValue(Data{})
	require.ErrorAs(t, err, &limit)
	assert.Equal(t, BoundRangeIterations, limit.Bound)
	out, err := tmpl.WithLimits(Limits{MaxOutputBytes: 40}).Execute(Data{})
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("ab", 20), out)
}

func TestPrintfWidthFromAnArgument(t *testing.T) {
	tmpl, err := Parse("t", `{{ printf "%*d" 1000000000 1 }}`)
	require.NoError(t, err)
	_, err = tmpl.Execute(Data{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(%*) is not supported")
	var limit *LimitError
	assert.ErrorAs(t, err, &limit, "refused at admission like any bound")
}

func TestDirectives(t *testing.T) {
	cases := []struct {
		format string
		want   []directive
	}{
		{"%s", []directive{{verb: 's', arg: 0}}},
		{"100%%", []directive{{verb: '%', arg: -1}}},
		{"%10d%3.2f", []directive{{verb: 'd', arg: 0, width: 10}, {verb: 'f', arg: 1, width: 3, precision: 2}}},
		{"%-08s", []directive{{verb: 's', arg: 0, width: 8}}},
		{"%.500x", []directive{{verb: 'x', arg: 0, precision: 500}}},
		{"%[2]d%v", []directive{{verb: 'd', arg: 1}, {verb: 'v', arg: 2}}},
		{"%[1]v%[1]v", []directive{{verb: 'v', arg: 0}, {verb: 'v', arg: 0}}},
		{"%*d", []directive{{verb: 'd', arg: 0, star: true}}},
		{"%[0]v", []directive{{verb: 'v', arg: 0}}},
		{"%099999999999999999999999d", []directive{{verb: 'd', arg: 0, width: int(^uint(0) >> 1)}}},
		{"%", []directive{{verb: 'v', arg: 0}}},
		{"%é", []directive{{verb: 'é', arg: 0}}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, directives(tc.format), tc.format)
	}
}

// FuzzFormattingStaysWithinItsBound drives random formats over large and
// small operands through printf, print and an action, and checks that no
// call allocates more than a small multiple of the output bound, whatever
// it writes or refuses: the bound is checked before fmt runs.
func FuzzFormattingStaysWithinItsBound(f *testing.F) {
	f.Add("%65536v", uint16(2000), "{{ printf %s .Labels .Name 1 2.5 .List }}")
	f.Add(strings.Repeat("%[1]v", 500), uint16(2000), "{{ printf %s .Labels }}")
	f.Add("%-1000.999x%[3]q%[5]v", uint16(10), "{{ printf %s .Name .Labels 3 .List }}")
	f.Add("%v", uint16(2000), "{{ print %s . . . }}{{ . }}{{ urlquery . }}")
	data := func(n uint16) Data {
		labels := manyLabels(int(n % 4000))
		return Data{"Labels": labels, "Name": strings.Repeat("n", 250),
			"List": []any{labels, "x", 1, 2.5, Null{}}, "Meta": Data{"Labels": labels, "Annotations": labels}}
	}
	f.Fuzz(func(t *testing.T, format string, n uint16, shape string) {
		if !strings.Contains(shape, "%s") || len(shape) > 200 || len(format) > 4000 {
			return
		}
		tmpl, err := Parse("fuzz", strings.Replace(shape, "%s", strconv.Quote(format), 1))
		if err != nil {
			return
		}
		d := data(n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, _ := tmpl.Execute(d)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 2<<20 {
			t.Fatalf("rendering %q over %d labels allocated %d KiB (output %d bytes)", shape, n, grew>>10, len(out))
		}
	})
}
