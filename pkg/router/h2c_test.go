package router_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// dialH2C opens an HTTP/2 connection without TLS to addr, with prior
// knowledge, as a raw framer: the preface, the settings, and the server's
// settings acknowledged.
func dialH2C(t *testing.T, addr string) (net.Conn, *http2.Framer) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(conn, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(conn, conn)
	require.NoError(t, fr.WriteSettings())
	for {
		f, err := fr.ReadFrame()
		require.NoError(t, err)
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			require.NoError(t, fr.WriteSettingsAck())
			return conn, fr
		}
	}
}

// headerBlock encodes header blocks with one HPACK encoder, as a
// connection does.
type headerBlock struct {
	buf bytes.Buffer
	enc *hpack.Encoder
}

func newHeaderBlock() *headerBlock {
	h := &headerBlock{}
	h.enc = hpack.NewEncoder(&h.buf)
	return h
}

// encode returns the block of the name, value pairs.
func (h *headerBlock) encode(t *testing.T, pairs ...string) []byte {
	t.Helper()
	h.buf.Reset()
	for i := 0; i+1 < len(pairs); i += 2 {
		require.NoError(t, h.enc.WriteField(hpack.HeaderField{Name: pairs[i], Value: pairs[i+1]}))
	}
	return bytes.Clone(h.buf.Bytes())
}

// TestIncompleteH2CHeaderBlock: an h2c client that starts a request's
// header block and never ends it is cut at the read-header timeout, as an
// HTTP/1 client trickling its headers is, not held for the idle timeout.
func TestIncompleteH2CHeaderBlock(t *testing.T) {
	backend := newRecorder(t)
	graphJSON := `{"nodes":{"root":{"routerType":"Sequence","steps":[{"name":"a","serviceUrl":"` + backend.URL + `"}]}}}`
	addr, _ := routerProcess(t, graphJSON, nil, "--server-read-header-timeout=1s", "--server-idle-timeout=30s")
	conn, fr := dialH2C(t, addr)
	defer conn.Close()
	block := newHeaderBlock().encode(t, ":method", "POST", ":scheme", "http", ":path", "/")
	// No END_HEADERS, and no CONTINUATION after it.
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: false}))
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _ = io.Copy(io.Discard, conn) // until the router closes it
	held := time.Since(start)
	t.Logf("the connection was held %s", held.Round(10*time.Millisecond))
	assert.Less(t, held, 5*time.Second, "cut at the read-header timeout")
}
