package client_test

import (
	"context"
	"github.com/mcpfn/mcpfn/mcp"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
)

// TestLegacyNoInitialize: NoInitialize reaches a legacy server without a
// session: Connect sends nothing in ModeLegacy, requests carry neither
// Mcp-Session-Id nor MCP-Protocol-Version, the version is 2025-03-26 with
// empty capabilities, and per-call credentials create no session either.
func TestLegacyNoInitialize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, nil)
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeLegacy, NoInitialize: true})
	if n := len(rec.all()); n != 0 {
		t.Fatalf("Connect sent %d requests", n)
	}
	if c.Modern() || c.ProtocolVersion() != core.ProtocolVersion20250326 || c.SessionID() != "" {
		t.Fatalf("modern %v version %q session %q", c.Modern(), c.ProtocolVersion(), c.SessionID())
	}
	if ir := c.InitializeResult(); ir == nil || ir.ProtocolVersion != core.ProtocolVersion20250326 || ir.Capabilities.Tools != nil {
		t.Fatalf("InitializeResult %+v", ir)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "a"}, &client.CallOptions{Token: "user-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "b"}, &client.CallOptions{Token: "user-2"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.all() {
		if s.RPC == "initialize" || s.Method != http.MethodPost {
			t.Fatalf("sent %s %s", s.Method, s.RPC)
		}
		if s.Header.Get("Mcp-Session-Id") != "" || s.Header.Get("Mcp-Protocol-Version") != "" {
			t.Fatalf("%s carried session headers: %v", s.RPC, s.Header)
		}
	}
	if got := rec.last("tools/call").Header.Get("Authorization"); got != "Bearer user-2" {
		t.Fatalf("Authorization %q", got)
	}
	c.Close()
	if n := len(rec.all()); n != 2 {
		t.Fatalf("%d requests in all, want the 2 calls (no DELETE)", n)
	}

	// ModeAuto probes, then makes no further call on a legacy server.
	url2, rec2 := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, nil)
	c2 := connect(t, ctx, url2, &client.Options{NoInitialize: true})
	if c2.Modern() || rec2.count("initialize") != 0 || len(rec2.all()) != 1 {
		t.Fatalf("auto: modern %v, %d requests", c2.Modern(), len(rec2.all()))
	}
	// A modern server ignores the option.
	url3, _ := newServer(t, nil, nil)
	c3, err := client.Connect(ctx, url3, &client.Options{NoInitialize: true})
	if err != nil || !c3.Modern() {
		t.Fatalf("modern server: %v", err)
	}
	c3.Close()
}

// TestLegacyAdoptSession: a Conn given a session id (and its version) uses
// that session without initialize, and leaves it open on Close.
func TestLegacyAdoptSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, nil)
	a, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true})
	if err != nil {
		t.Fatal(err)
	}
	sid := a.SessionID()
	if sid == "" {
		t.Fatal("no session id")
	}
	n := len(rec.all())
	b, err := client.Connect(ctx, url, &client.Options{SessionID: sid, SessionVersion: a.ProtocolVersion(), NoGETStream: true,
		NoInitialize: true}) // ignored: a session id is given
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.all()) != n || b.Modern() || b.SessionID() != sid || b.ProtocolVersion() != core.ProtocolVersion20251125 {
		t.Fatalf("adopt: %d requests, session %q version %q", len(rec.all())-n, b.SessionID(), b.ProtocolVersion())
	}
	if _, err := b.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	call := rec.last("tools/call")
	if call.Header.Get("Mcp-Session-Id") != sid || call.Header.Get("Mcp-Protocol-Version") != core.ProtocolVersion20251125 {
		t.Fatalf("headers %v", call.Header)
	}
	b.Close() // not b's session: no DELETE
	if _, err := a.CallTool(ctx, "echo", map[string]any{"s": "y"}, nil); err != nil {
		t.Fatalf("the session was ended by the adopter: %v", err)
	}
	if rec.count("initialize") != 1 {
		t.Fatalf("initialize %d", rec.count("initialize"))
	}
	a.Close()

	// Bad input fails at Connect, before anything is sent.
	for _, o := range []*client.Options{
		{SessionID: "bad\nid"},
		{SessionID: sid, SessionVersion: core.ProtocolVersion20260728},
		{SessionID: sid, Mode: client.ModeModern},
	} {
		if _, err := client.Connect(ctx, url, o); err == nil {
			t.Errorf("Connect(%+v) succeeded", o)
		}
	}
}

// TestLegacyGETNotFound: a 404 to the session's GET stream ends the session
// as well: the next call starts a new one before it is sent, instead of
// being refused first.
func TestLegacyGETNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, rec := newServer(t, &core.ServerOptions{Mode: core.ModeLegacy}, nil)
	var once atomic.Bool
	rec.fault = func(w http.ResponseWriter, r *http.Request, s *seen) bool {
		if r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") != "" && once.CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`))
			return true
		}
		return false
	}
	c := connect(t, ctx, url, &client.Options{Mode: client.ModeLegacy})
	first := c.SessionID()
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if rec.count("initialize") != 2 || rec.count("tools/call") != 1 {
		t.Fatalf("initialize %d, tools/call %d; want 2 and 1", rec.count("initialize"), rec.count("tools/call"))
	}
	if c.SessionID() == first || rec.last("tools/call").Header.Get("Mcp-Session-Id") != c.SessionID() {
		t.Fatalf("session %q (was %q), call sent in %q", c.SessionID(), first, rec.last("tools/call").Header.Get("Mcp-Session-Id"))
	}
}

// TestLegacyResubscribe: the resource subscriptions of a running Listen
// belong to the session; a new session (after a 404) subscribes again.
func TestLegacyResubscribe(t *testing.T) {
	t.Parallel()
	srv := newRestartable(t, func() http.Handler {
		s := core.NewServer(core.Implementation{Name: "subs", Version: "1"}, &core.ServerOptions{Mode: core.ModeLegacy})
		s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://r", Text: "x"}}}, nil
		})
		return nethttp.Handler(s)
	})
	c, err := client.Connect(context.Background(), srv.url, &client.Options{Mode: client.ModeLegacy, NoGETStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	acked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"test://r"}},
			func(mcp.SubscriptionFilter) { close(acked) }, func(client.Notification) {})
	}()
	<-acked
	srv.restart()
	if _, err := c.ReadResource(context.Background(), "test://r", nil); err != nil {
		t.Fatal(err)
	}
	subs := 0
	for _, s := range srv.rec.all() {
		if s.RPC == "resources/subscribe" {
			subs++
			if s.Header.Get("Mcp-Session-Id") == "" {
				t.Fatal("resources/subscribe without a session")
			}
		}
	}
	if sub := srv.rec.last("resources/subscribe"); subs != 2 || sub.Header.Get("Mcp-Session-Id") != c.SessionID() {
		t.Fatalf("resources/subscribe sent %d times, last in %q (session %q)", subs, sub.Header.Get("Mcp-Session-Id"), c.SessionID())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
