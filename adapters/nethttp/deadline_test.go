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
	"github.com/mcpfn/mcpfn/internal/mcptest"
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

// TestBodyReadTimeout checks the body bound of both ways to serve: with
// BodyReadTimeout, a trickling client gets a 408 and the connection is
// closed; a normal request served meanwhile succeeds; and neither an SSE
// response nor a legacy GET stream that lasts longer than the bound is cut
// by it. NewHandler sets and clears the deadline itself (LimitBodyRead);
// ServeListener lets its http.Server's ReadTimeout set it and only clears
// it.
func TestBodyReadTimeout(t *testing.T) {
	t.Parallel()
	t.Run("NewHandler", func(t *testing.T) {
		t.Parallel()
		testBodyReadTimeout(t, func(srv *core.Server, opts *nethttp.Options) string {
			ts := httptest.NewServer(nethttp.NewHandler(srv, opts))
			t.Cleanup(ts.Close)
			return ts.Listener.Addr().String()
		})
	})
	t.Run("ServeListener", func(t *testing.T) {
		t.Parallel()
		testBodyReadTimeout(t, func(srv *core.Server, opts *nethttp.Options) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- nethttp.ServeListener(ctx, ln, srv, opts) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("ServeListener: %v", err)
				}
			})
			return ln.Addr().String()
		})
	})
}

func testBodyReadTimeout(t *testing.T, serve func(*core.Server, *nethttp.Options) string) {
	const bound = 300 * time.Millisecond
	release, streaming := make(chan struct{}), make(chan struct{})
	srv := newServer(&core.ServerOptions{StreamKeepAlive: -1})
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
	addr := serve(srv, &nethttp.Options{BodyReadTimeout: bound})
	base := "http://" + addr + nethttp.DefaultPath
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // a failing test must not leave the handler waiting

	// An SSE response and a legacy GET stream, both started before the
	// trickling client connects.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},` +
		`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := addRequest(base, strings.NewReader(body))
	req.RequestURI = ""
	req.Header.Set("Mcp-Name", "slow")
	sse, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Body.Close()
	<-streaming
	get := legacyGetStream(t, client, base)
	defer get.Close()

	// The trickling client is answered within the bound (the test's own
	// deadline is a failure bound, far above it), and not before it: the
	// clock starts before the dial, because ServeListener's ReadTimeout
	// counts from the moment net/http begins reading the connection.
	start := time.Now()
	c := trickle(t, addr)
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
	rec, err := client.Do(func() *http.Request {
		r := addRequest(base, strings.NewReader(addBody))
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

	// The GET stream began before the trickler, so a deadline of its own
	// would have passed too; it must still carry a notification.
	core.AddTool(srv, &core.Tool{Name: "late", Description: "Changes the tool list."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "", nil })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a failure bound
	defer cancel()
	if ev, err := get.Next(ctx); err != nil || !strings.Contains(ev.Data, "notifications/tools/list_changed") {
		t.Fatalf("GET stream: %+v, %v; want the list change", ev, err)
	}

	// Likewise the SSE response must still deliver its final result.
	free()
	all, err := io.ReadAll(sse.Body)
	if err != nil {
		t.Fatalf("SSE stream cut: %v (%s)", err, all)
	}
	if !strings.Contains(string(all), `"progress":1`) || !strings.Contains(string(all), `"text":"finished"`) {
		t.Fatalf("SSE stream: %s", all)
	}
}

// legacyGetStream opens a 2025-11-25 session and its GET stream.
func legacyGetStream(t *testing.T, client *http.Client, url string) *mcptest.EventStream {
	t.Helper()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q", res.StatusCode, sid)
	}
	req, _ = http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		res.Body.Close()
		t.Fatalf("GET stream: HTTP %d", res.StatusCode)
	}
	return mcptest.NewEventStream(res.Body, true)
}

// TestLimitBodyReadDisabled checks that a non-positive bound adds nothing.
func TestLimitBodyReadDisabled(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	if got := nethttp.LimitBodyRead(h, 0); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", h) {
		t.Fatal("a zero bound must return the handler itself")
	}
}
