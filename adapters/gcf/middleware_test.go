package gcf_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/callrec"
)

// TestMiddlewareThroughHandler checks that a core middleware sees a request
// served by the Cloud Functions handler: method, target, era, the W3C trace
// context in params._meta and in the traceparent header, and the outcome.
func TestMiddlewareThroughHandler(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, target, version, metaParent, headerParent string
		modern, isError                                   bool
	}
	rec := &callrec.Recorder[seen]{See: func(_ context.Context, c *core.Call, out *core.Outcome, _ error) seen {
		tp, _ := c.MetaString("traceparent")
		s := seen{method: c.Method, target: c.Target, version: c.ProtocolVersion, modern: c.Modern(),
			metaParent: tp, headerParent: c.Header.Get("Traceparent")}
		if out != nil {
			s.isError = out.IsError
		}
		return s
	}}
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, &core.ServerOptions{
		DisableRequestLog: true,
		Middleware:        []core.Middleware{rec.Middleware},
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) {
		return in.Left + in.Right, nil
	})
	hs := httptest.NewServer(http.HandlerFunc(gcf.Handler(srv)))
	defer hs.Close()

	const metaTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const headerTP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	res := call(t, hs.URL+"/", "add", map[string]any{"traceparent": metaTP}, http.Header{"Traceparent": {headerTP}})
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("tools/call: %s", res.Status)
	}
	want := seen{method: "tools/call", target: "add", version: "2026-07-28", modern: true, metaParent: metaTP, headerParent: headerTP}
	if got := rec.Seen(); len(got) != 1 || got[0] != want {
		t.Fatalf("the middleware saw %+v, want exactly %+v", got, want)
	}
}
