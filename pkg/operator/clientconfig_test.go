package operator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/rest"
)

func TestClientConfig(t *testing.T) {
	tests := []struct {
		name            string
		opts            Options
		qps             float32
		burst           int
		noGzipResponses bool
	}{
		{"defaults", Options{}, DefaultQPS, DefaultBurst, true},
		{"limits and gzip asked for", Options{QPS: 50, Burst: 60, APICompression: true}, 50, 60, false},
		{"no client-side limit", Options{QPS: -1, Burst: 10}, -1, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := clientConfig(&rest.Config{Host: "https://example.invalid"}, tt.opts)
			assert.Equal(t, tt.qps, cfg.QPS)
			assert.Equal(t, tt.burst, cfg.Burst)
			assert.Equal(t, tt.noGzipResponses, cfg.DisableCompression)
		})
	}
}
