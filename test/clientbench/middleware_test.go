package clientbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	fnmcp "github.com/mcpfn/mcpfn/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestMiddlewareGoSDK: client.Middleware against go-sdk's server (not
// mcpfn's), in both eras it serves (2026-07-28 stateless, 2025-11-25 with
// sessions):
// the middleware sees each request's method, target, era and outcome (a
// result, isError, a JSON-RPC error code), and the _meta entry and HTTP
// header it adds reach go-sdk's tool handler.
func TestMiddlewareGoSDK(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "trace"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		text := fmt.Sprintf("meta=%v header=%s", req.Params.GetMeta()["traceparent"], req.Extra.Header.Get("Traceparent"))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "boom"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil, nil
	})
	// go-sdk serves 2026-07-28 statelessly and 2025-11-25 with sessions.
	handler := func(stateless bool) string {
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	urls := map[client.Mode]string{client.ModeAuto: handler(true), client.ModeLegacy: handler(false)}
	ctx := context.Background()

	for _, mode := range []client.Mode{client.ModeAuto, client.ModeLegacy} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			mw := func(next client.Handler) client.Handler {
				return func(ctx context.Context, req *client.Call) (*client.Outcome, error) {
					req.SetMeta("traceparent", traceparent)
					req.SetHeader("Traceparent", traceparent)
					resp, err := next(ctx, req)
					out := "ok"
					var re *fnmcp.Error
					switch {
					case errors.As(err, &re):
						out = fmt.Sprintf("code:%d", re.Code)
					case err != nil:
						out = "err:" + err.Error()
					case resp.IsError:
						out = "isError"
					}
					mu.Lock()
					seen = append(seen, fmt.Sprintf("%s %s %v %s %s", req.Method, req.Target, req.Modern, req.Version, out))
					mu.Unlock()
					return resp, err
				}
			}
			c, err := client.Connect(ctx, urls[mode], &client.Options{Mode: mode, NoGETStream: true, Middleware: []client.Middleware{mw}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Modern() != (mode == client.ModeAuto) {
				t.Fatalf("mode %v: Modern() = %v", mode, c.Modern())
			}
			r, err := c.CallTool(ctx, "trace", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := mcptest.Text(r), "meta="+traceparent+" header="+traceparent; got != want {
				t.Errorf("go-sdk's handler saw %q, want %q", got, want)
			}
			if r, err := c.CallTool(ctx, "boom", nil, nil); err != nil || !r.IsError {
				t.Fatalf("boom: %+v, %v", r, err)
			}
			if _, err := c.CallTool(ctx, "nope", nil, nil); err == nil {
				t.Fatal("an unknown tool succeeded")
			}
			v, modern := c.ProtocolVersion(), c.Modern()
			mu.Lock()
			all := append([]string(nil), seen...)
			mu.Unlock()
			var got []string
			for _, e := range all {
				if strings.HasPrefix(e, "tools/call ") {
					got = append(got, e)
				}
			}
			want := []string{
				fmt.Sprintf("tools/call trace %v %s ok", modern, v),
				fmt.Sprintf("tools/call boom %v %s isError", modern, v),
				fmt.Sprintf("tools/call nope %v %s code:%d", modern, v, fnmcp.CodeInvalidParams),
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tools/call seen %q, want %q (all: %q)", got, want, all)
			}
			if modern && all[0] != "server/discover  true "+v+" ok" {
				t.Errorf("first modern request %q, want the probe", all[0])
			}
			if !modern && all[0] != "initialize  false "+fnmcp.ProtocolVersion20251125+" ok" {
				t.Errorf("first legacy request %q, want initialize", got[0])
			}
		})
	}
}
