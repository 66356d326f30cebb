package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func roundOf(ratio float64) Round {
	return Round{Ratio: &Percentiles{P100: ratio}, Floor: &FloorResult{}, Serval: &ServalResult{}}
}

// TestMedianRound: the result of several rounds is the one with the median
// ratio, not the best.
func TestMedianRound(t *testing.T) {
	for _, tt := range []struct {
		name   string
		rounds []Round
		want   int
	}{
		{"one", []Round{roundOf(1.3)}, 0},
		{"three", []Round{roundOf(1.03), roundOf(1.63), roundOf(1.46)}, 2},
		{"four: the lower middle", []Round{roundOf(1.4), roundOf(1.1), roundOf(1.2), roundOf(1.3)}, 2},
		{"no floor: the time", []Round{{Serval: &ServalResult{Ready: Percentiles{P100: 90}}},
			{Serval: &ServalResult{Ready: Percentiles{P100: 80}}}, {Serval: &ServalResult{Ready: Percentiles{P100: 85}}}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, medianRound(tt.rounds))
		})
	}
}

func TestPrintRounds(t *testing.T) {
	rounds := []Round{roundOf(1.03), roundOf(1.63), roundOf(1.46)}
	for i := range rounds {
		rounds[i].Floor.Ready.P100, rounds[i].Serval.Ready.P100 = 60, 60*rounds[i].Ratio.P100
	}
	var out bytes.Buffer
	Print(&out, &Result{N: 1000, Round: rounds[2], Rounds: rounds, MedianRound: 3})
	assert.Contains(t, out.String(), "3 rounds, each Serval then the floor: all Ready × floor 1.03, 1.63, 1.46; below, round 3, the median")
	assert.Regexp(t, `all Ready\s+1\.46\s`, out.String(), "the table is the median round's")
	assert.NotContains(t, out.String(), "the same work", "no control figures without them")

	// With the components' CPU, each round says how fast the machine ran.
	for i, speed := range []float64{1.0, 1.3, 1.2} {
		rounds[i].Floor.ComponentsCPUSeconds, rounds[i].Serval.ComponentsCPUSeconds = 20, 20*speed
	}
	out.Reset()
	Print(&out, &Result{N: 1000, Round: rounds[2], Rounds: rounds, MedianRound: 3})
	assert.Contains(t, out.String(), "all Ready × floor 1.03, 1.63, 1.46 (the same work's CPU × floor 1.00, 1.30, 1.20); below, round 3")
	assert.Regexp(t, `the same work's CPU \(see below\)\s+1\.20\s+20\.0 s\s+24\.0 s`, out.String())

	// Without the floor (--no-floor), the rounds are times, and say so.
	alone := []Round{{Serval: &ServalResult{Ready: Percentiles{P100: 90}}}, {Serval: &ServalResult{Ready: Percentiles{P100: 80}}}}
	out.Reset()
	Print(&out, &Result{N: 1000, Round: alone[1], Rounds: alone, MedianRound: 2})
	assert.Contains(t, out.String(), "2 rounds of Serval alone: all Ready after 90.0 s, 80.0 s; below, round 2, the median")
	assert.NotContains(t, out.String(), "the floor")
}

// TestRoundsJSON: the median round's figures stay where one round's are,
// at the top of the document, with every round listed after.
func TestRoundsJSON(t *testing.T) {
	rounds := []Round{roundOf(1.03), roundOf(1.63), roundOf(1.46)}
	data, err := json.Marshal(&Result{N: 1000, Round: rounds[2], Rounds: rounds, MedianRound: 3})
	assert.NoError(t, err)
	var doc struct {
		Ratio       Percentiles `json:"ratioToFloor"`
		Serval      any         `json:"serval"`
		Rounds      []any       `json:"rounds"`
		MedianRound int         `json:"medianRound"`
	}
	assert.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, 1.46, doc.Ratio.P100)
	assert.NotNil(t, doc.Serval)
	assert.Len(t, doc.Rounds, 3)
	assert.Equal(t, 3, doc.MedianRound)
}
