package router

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadCapped(t *testing.T) {
	body := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	tests := []struct {
		name    string
		size    int
		length  int64 // announced; -1 unknown
		limit   int64
		tooLong bool
	}{
		{"empty", 0, -1, 10, false},
		{"small, length unknown", 100, -1, 1 << 20, false},
		{"small, length known", 100, 100, 1 << 20, false},
		{"several segments, length unknown", 9<<20 + 7, -1, 16 << 20, false},
		{"large, length known", 9<<20 + 7, 9<<20 + 7, 16 << 20, false},
		{"exactly the cap, length unknown", 1 << 20, -1, 1 << 20, false},
		{"one byte over the cap, length unknown", 1<<20 + 1, -1, 1 << 20, true},
		{"announced over the cap", 10, 1<<20 + 1, 1 << 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := body(tt.size)
			// iotest-like: a reader that hides its length and returns
			// short reads.
			r := io.MultiReader(bytes.NewReader(want[:tt.size/2]), bytes.NewReader(want[tt.size/2:]))
			got, err := readCapped(r, tt.length, tt.limit, "the body", make([]byte, 0, 1024), nil)
			if tt.tooLong {
				require.Error(t, err)
				assert.Equal(t, "the body is larger than the cap of 1048576 bytes", err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(want), len(got))
			assert.True(t, bytes.Equal(want, got))
		})
	}
	_, err := readCapped(io.MultiReader(strings.NewReader("ab"), iotestErr{}), -1, 10, "the body", nil, nil)
	assert.ErrorIs(t, err, io.ErrClosedPipe, "a read error is returned as it is")
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestConnectionOptionsDoNotPass: a header the request's Connection header
// names describes the client's connection, and never reaches a step, even
// when the propagation list would pass it.
func TestConnectionOptionsDoNotPass(t *testing.T) {
	f := newHeaderFilter([]string{"X-*", "Authorization"})
	in := http.Header{"Connection": {"X-Secret, keep-alive", "authorization"}, "X-Secret": {"1"}, "X-Trace": {"t"}, "Authorization": {"Bearer x"}}
	out := f.stepHeader(in)
	assert.Equal(t, []string{"t"}, out["X-Trace"])
	assert.Nil(t, out["X-Secret"])
	assert.Nil(t, out["Authorization"])
}

// TestStepURLsAreLoggedWithoutSecrets: the URL a failed step is logged
// with has no password, query or fragment.
func TestStepURLsAreLoggedWithoutSecrets(t *testing.T) {
	up, err := newUpstreams(Options{}.withDefaults()).get("http://user:s3cret@model.team.svc/v1/predict?token=abc#frag")
	if err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, "http://user:xxxxx@model.team.svc/v1/predict", up.url)
	assert.Equal(t, "token=abc", up.target.RawQuery, "the call itself keeps them")
}
