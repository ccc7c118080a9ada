package otel_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/otel"
)

// TestSessionDuration: Instrument records one mcp.server.session.duration
// point per legacy session the client ends (client.Conn.Close sends
// DELETE), none for 2026-07-28 connections (no session), and keeps an
// OnSessionEnd the options already had.
func TestSessionDuration(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	var earlier []core.SessionEnd
	so := &core.ServerOptions{DisableRequestLog: true, Logger: slog.New(slog.DiscardHandler),
		OnSessionEnd: func(_ context.Context, e core.SessionEnd) { earlier = append(earlier, e) }}
	otel.Instrument(so, s.opts)
	if len(so.Middleware) != 1 {
		t.Fatalf("Instrument installed %d middlewares, want 1", len(so.Middleware))
	}
	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, so)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "echo", nil
	})
	ts := httptest.NewServer(nethttp.Handler(srv))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	for _, mode := range []client.Mode{client.ModeLegacy, client.ModeLegacy, client.ModeModern} {
		c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Mode: mode, NoGETStream: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(ctx, "echo", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(earlier) != 2 {
		t.Fatalf("the OnSessionEnd set before Instrument saw %d ends, want 2", len(earlier))
	}
	pts := s.histogram(t, otel.MetricServerSessionDuration)
	if len(pts) != 1 || pts[0].Count != 2 {
		t.Fatalf("session histogram points %+v, want one point counting 2 sessions", pts)
	}
	a := attrs(pts[0].Attributes.ToSlice())
	if a["mcp.protocol.version"] != "2025-11-25" || a["network.protocol.name"] != "http" || a["network.transport"] != "tcp" || len(a) != 3 {
		t.Fatalf("session histogram attributes %v", a)
	}
	if got := pts[0].Bounds; len(got) == 0 || got[0] != 0.01 || got[len(got)-1] != 300 {
		t.Fatalf("bounds %v, want the conventions' 0.01 … 300", got)
	}
	if pts[0].Sum < 0 || pts[0].Sum > 60 {
		t.Fatalf("sum of two sessions %v s", pts[0].Sum)
	}
}

// TestInstrumentZero: the zero Options installs nothing.
func TestInstrumentZero(t *testing.T) {
	t.Parallel()
	so := &core.ServerOptions{}
	otel.Instrument(so, otel.Options{})
	if so.Middleware != nil || so.OnSessionEnd != nil {
		t.Fatalf("zero Options installed %d middlewares, OnSessionEnd %v", len(so.Middleware), so.OnSessionEnd != nil)
	}
}
