package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metrics is one scrape of a /metrics endpoint.
type metrics map[string]*dto.MetricFamily

func scrape(url string) (metrics, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	ms, err := parseMetrics(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return ms, nil
}

func parseMetrics(data []byte) (metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(data))
}

// matches reports whether m has every label pair of want.
func matches(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds the samples of a counter or gauge whose labels include want.
func (ms metrics) sum(name string, want map[string]string) float64 {
	total := 0.0
	for _, m := range ms[name].GetMetric() {
		if matches(m, want) {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		}
	}
	return total
}

// byLabel sums a counter's samples by the value of one label, keeping those
// for which keep is true.
func (ms metrics) byLabel(name, by string, keep func(*dto.Metric) bool) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms[name].GetMetric() {
		if keep == nil || keep(m) {
			out[label(m, by)] += m.GetCounter().GetValue()
		}
	}
	return out
}

// histogram is the cumulative buckets of a histogram's samples whose labels
// include want, and their count.
type histogram struct {
	bounds []float64
	counts []float64 // cumulative, per bound
	count  float64
}

func (ms metrics) histogram(name string, want map[string]string) histogram {
	byBound := map[float64]float64{}
	h := histogram{}
	for _, m := range ms[name].GetMetric() {
		if !matches(m, want) {
			continue
		}
		h.count += float64(m.GetHistogram().GetSampleCount())
		for _, b := range m.GetHistogram().GetBucket() {
			byBound[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	for b := range byBound {
		h.bounds = append(h.bounds, b)
	}
	sort.Float64s(h.bounds)
	for _, b := range h.bounds {
		h.counts = append(h.counts, byBound[b])
	}
	return h
}

// minus is the histogram of the observations made since before.
func (h histogram) minus(before histogram) histogram {
	out := histogram{bounds: h.bounds, count: h.count - before.count}
	for i, b := range h.bounds {
		c := h.counts[i]
		for j, bb := range before.bounds {
			if bb == b {
				c -= before.counts[j]
			}
		}
		out.counts = append(out.counts, c)
	}
	return out
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile does:
// linear within the bucket that holds it.
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * h.count
	lower, below := 0.0, 0.0
	for i, b := range h.bounds {
		if h.counts[i] >= rank {
			if math.IsInf(b, 1) {
				return lower
			}
			inBucket := h.counts[i] - below
			if inBucket == 0 {
				return b
			}
			return lower + (b-lower)*(rank-below)/inBucket
		}
		lower, below = b, h.counts[i]
	}
	return lower
}

// labelsOf formats label pairs for error messages.
func labelsOf(want map[string]string) string {
	var parts []string
	for k, v := range want {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
