package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/serval-dev/serval/internal/testenv"
)

// browser runs Debian's Chromium (bin/chromium, installed by `make
// chromium`) headless, one fresh profile per page, with the flags that keep
// it off the network but for the page it loads.
type browser struct {
	bin string
	// shots is where screenshots are kept, as the test's artifacts.
	shots string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(root, "bin", "chromium")
	_, err = os.Stat(bin)
	require.NoError(t, err, "the console's tests need Chromium: run `make chromium`")
	shots := os.Getenv("SERVAL_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(root, "bin", "artifacts", "console")
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	return &browser{bin: bin, shots: shots}
}

func (b *browser) run(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, b.bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium %v: %s", args, stderr.String())
	return out
}

// dom loads url and returns the document as Chromium has it once the page
// has loaded (its scripts run).
func (b *browser) dom(t *testing.T, url string) *html.Node {
	t.Helper()
	out := b.run(t, "--dump-dom", url)
	doc, err := html.Parse(bytes.NewReader(out))
	require.NoError(t, err)
	return doc
}

// screenshot keeps a picture of url as name.png among the artifacts.
func (b *browser) screenshot(t *testing.T, url, name string, width, height int) string {
	t.Helper()
	file := filepath.Join(b.shots, name+".png")
	b.run(t, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--screenshot="+file, url)
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(5000), "a screenshot of a drawn page")
	t.Logf("screenshot: %s", file)
	return file
}

// find returns the elements below n whose attributes include every one of
// attrs ("data-kind": "InferenceService"); a value of "*" only asks that
// the attribute be there.
func find(n *html.Node, tag string, attrs map[string]string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (tag == "" || n.Data == tag) && hasAttrs(n, attrs) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func hasAttrs(n *html.Node, attrs map[string]string) bool {
	for k, v := range attrs {
		got, ok := attr(n, k)
		if !ok || (v != "*" && got != v) {
			return false
		}
	}
	return true
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// text is the text below n.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
