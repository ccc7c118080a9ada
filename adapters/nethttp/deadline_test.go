package nethttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

// trickle opens a connection, sends a POST that declares a 100-byte body
// and sends one byte of it, and returns the connection.
func trickle(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr)
	return c
}

// TestBodyReadTimeout is issue 11, defect 3: a body sent slowly held a
// connection and a goroutine for as long as the client liked. With
// BodyReadTimeout, the trickling client gets a 408 and the connection is
// closed; a normal request served meanwhile succeeds; and an SSE response
// that lasts longer than the body deadline is not cut by it.
func TestBodyReadTimeout(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	release, streaming := make(chan struct{}), make(chan struct{})
	srv := newServer(nil)
	core.AddTool(srv, &core.Tool{Name: "slow", Description: "Streams, then waits for the test."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if err := req.NotifyProgress(ctx, 1, 2, "started"); err != nil {
				return "", err
			}
			close(streaming)
			select {
			case <-release:
				return "finished", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	ts := httptest.NewServer(nethttp.NewHandler(srv, &nethttp.Options{BodyReadTimeout: bound}))
	t.Cleanup(ts.Close)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // a failing test must not leave the handler waiting
	addr := ts.Listener.Addr().String()

	// An SSE response, started before the trickling client connects.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},` +
		`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := addRequest(ts.URL+"/mcp", strings.NewReader(body))
	req.RequestURI = ""
	req.Header.Set("Mcp-Name", "slow")
	sse, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Body.Close()
	<-streaming

	// The trickling client is answered within the bound (the test's own
	// deadline is a failure bound, far above it).
	c := trickle(t, addr)
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to the trickling client: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":-32600`) {
		t.Fatalf("HTTP %d %s, want 408 with a JSON-RPC error", resp.StatusCode, b)
	}
	if d := time.Since(start); d < bound {
		t.Fatalf("answered after %v, before the %v bound", d, bound)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("connection still open after the 408: %d, %v", n, err)
	}

	// A normal request meanwhile succeeds.
	rec, err := ts.Client().Do(func() *http.Request {
		r := addRequest(ts.URL+"/mcp", strings.NewReader(addBody))
		r.RequestURI = ""
		return r
	}())
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := io.ReadAll(rec.Body)
	rec.Body.Close()
	if rec.StatusCode != 200 || !strings.Contains(string(ab), `"text":"42"`) {
		t.Fatalf("normal request: HTTP %d %s", rec.StatusCode, ab)
	}

	// The SSE response began before the trickler, so its body deadline has
	// passed too; it must still deliver its final result.
	free()
	all, err := io.ReadAll(sse.Body)
	if err != nil {
		t.Fatalf("SSE stream cut: %v (%s)", err, all)
	}
	if !strings.Contains(string(all), `"progress":1`) || !strings.Contains(string(all), `"text":"finished"`) {
		t.Fatalf("SSE stream: %s", all)
	}
}

// TestLimitBodyReadDisabled checks that a non-positive bound adds nothing.
func TestLimitBodyReadDisabled(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	if got := nethttp.LimitBodyRead(h, 0); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", h) {
		t.Fatal("a zero bound must return the handler itself")
	}
}
