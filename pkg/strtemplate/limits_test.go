package strtemplate

import (
	"errors"
	"runtime"
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
		{"a printf width", `{{ printf "%01000000000d" 1 }}`, BoundOutputBytes},
		{"a printf precision", `{{ printf "%.999999999f" 1.0 }}`, BoundOutputBytes},
		{"a width too large for an int", `{{ printf "%099999999999999999999999d" 1 }}`, BoundOutputBytes},
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
			_, err = tmpl.Execute(Data{})
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			var limit *LimitError
			require.True(t, errors.As(err, &limit), "want a LimitError, got %v", err)
			assert.Equal(t, tc.bound, limit.Bound)
			assert.Contains(t, err.Error(), "serval-config templates."+string(tc.bound))
			assert.Contains(t, err.Error(), "env X:1:")
			// No render allocates more than a few times its output bound.
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "allocated")
		})
	}
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
}

func TestLargestWidth(t *testing.T) {
	cases := []struct {
		format string
		want   int
		star   bool
	}{
		{"%s", 0, false}, {"%%", 0, false}, {"%10d%3.2f", 10, false}, {"%-08s", 8, false},
		{"%.500x", 500, false}, {"%[2]d", 2, false}, {"%*d", 0, true}, {"100%", 0, false},
	}
	for _, tc := range cases {
		got, star := largestWidth(tc.format)
		assert.Equal(t, tc.want, got, tc.format)
		assert.Equal(t, tc.star, star, tc.format)
	}
}
