package client_test

import (
	"context"
	"net/http"
	"testing"

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
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeLegacy, NoInitialize: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := len(rec.all()); n != 0 {
		t.Fatalf("Connect sent %d requests", n)
	}
	if c.Modern() || c.ProtocolVersion() != core.ProtocolVersion20250326 || c.SessionID() != "" {
		t.Fatalf("modern %v version %q session %q", c.Modern(), c.ProtocolVersion(), c.SessionID())
	}
	if ir := c.InitializeResult(); ir == nil || ir.ProtocolVersion != core.ProtocolVersion20250326 || ir.Capabilities.Tools != nil {
		t.Fatalf("InitializeResult %+v", ir)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "a"}, client.WithAuthorization("user-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"s": "b"}, client.WithAuthorization("user-2")); err != nil {
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
	c2, err := client.Connect(ctx, url2, &client.Options{NoInitialize: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
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
	if _, err := b.CallTool(ctx, "echo", map[string]any{"s": "x"}); err != nil {
		t.Fatal(err)
	}
	call := rec.last("tools/call")
	if call.Header.Get("Mcp-Session-Id") != sid || call.Header.Get("Mcp-Protocol-Version") != core.ProtocolVersion20251125 {
		t.Fatalf("headers %v", call.Header)
	}
	b.Close() // not b's session: no DELETE
	if _, err := a.CallTool(ctx, "echo", map[string]any{"s": "y"}); err != nil {
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
