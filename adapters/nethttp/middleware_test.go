package nethttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/callrec"
)

// TestMiddlewareOverTCP checks that a core middleware sees the requests of
// both eras served by the adapter on a real listener, with the era, the
// session (legacy) and the HTTP headers.
func TestMiddlewareOverTCP(t *testing.T) {
	t.Parallel()
	rec := &callrec.Recorder[string]{See: func(_ context.Context, c *core.Call, out *core.Outcome, err error) string {
		era := "legacy"
		if c.Modern() {
			era = "modern"
		}
		return strings.Join([]string{c.Method, c.Target, era, out.Status(err), c.Header.Get("Traceparent"),
			map[bool]string{true: "session"}[c.Session != nil]}, " ")
	}}
	srv := newServer(&core.ServerOptions{DisableRequestLog: true, Middleware: []core.Middleware{rec.Middleware}})
	ts := httptest.NewServer(nethttp.Handler(srv))
	t.Cleanup(ts.Close)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	post := func(body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Traceparent", tp)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode/100 != 2 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("HTTP %d %s", res.StatusCode, b)
		}
		return res
	}
	post(addBody, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"})
	init := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := init.Header.Get("Mcp-Session-Id")
	legacy := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacy)
	res := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`, legacy)
	if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), `"text":"3"`) {
		t.Errorf("legacy call: %s", b)
	}
	want := []string{"tools/call add modern ok " + tp + " ", "tools/call add legacy ok " + tp + " session"}
	if seen := rec.Seen(); strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("the middleware saw %q, want %q", seen, want)
	}
}
