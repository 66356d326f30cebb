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

// TestIncompleteH2CHeaderBlock: an h2c client that starts a request's
// header block and never ends it is cut at the read-header timeout, as an
// HTTP/1 client trickling its headers is, not held for the idle timeout.
func TestIncompleteH2CHeaderBlock(t *testing.T) {
	backend := newRecorder(t)
	graphJSON := `{"nodes":{"root":{"routerType":"Sequence","steps":[{"name":"a","serviceUrl":"` + backend.URL + `"}]}}}`
	addr, _ := routerProcess(t, graphJSON, nil, "--server-read-header-timeout=1s", "--server-idle-timeout=30s")
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(conn, conn)
	require.NoError(t, fr.WriteSettings())
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/"}} {
		require.NoError(t, enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	// No END_HEADERS, and no CONTINUATION after it.
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: false}))
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _ = io.Copy(io.Discard, conn) // until the router closes it
	held := time.Since(start)
	t.Logf("the connection was held %s", held.Round(10*time.Millisecond))
	assert.Less(t, held, 5*time.Second, "cut at the read-header timeout")
}
