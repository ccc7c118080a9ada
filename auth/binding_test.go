package auth_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

const legacyVersion = core.ProtocolVersion20251125

func addAsk(srv *core.Server) {
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Asks the user to open a URL."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if r, ok := req.Input.Elicitation("go"); ok {
				return "action " + r.Action, nil
			}
			return "", core.InputRequired(core.InputRequests{"go": core.ElicitURL("Open this", "https://example.com/x")}, "")
		})
}

func (e *env) tokenFor(sub, scope string) string {
	return e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Subject: sub, Scope: scope})
}

// TestStateBoundToCaller: caller A's requestState is refused for caller B
// (-32602) and accepted for A with a stepped-up token (same issuer, client
// and subject, more scopes).
func TestStateBoundToCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{})
	addAsk(e.srv)
	r := e.do(t, e.tokenFor("alice", "mcp"), call("ask"))
	res, _ := r.msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if r.status != 200 || res["resultType"] != "input_required" || state == "" {
		t.Fatalf("first round: %d %s", r.status, r.body)
	}
	round2 := call("ask")
	round2.params["requestState"] = state
	round2.params["inputResponses"] = map[string]any{"go": map[string]any{"action": "accept"}}

	rb := e.do(t, e.tokenFor("bob", "mcp"), round2)
	if rb.status != 200 || rb.errCode() != core.CodeInvalidParams {
		t.Fatalf("bob replayed alice's state: %d %s", rb.status, rb.body)
	}
	ra := e.do(t, e.tokenFor("alice", "mcp admin"), round2)
	if ra.status != 200 || ra.text() != "action accept" {
		t.Fatalf("alice with a stepped-up token: %d %s", ra.status, ra.body)
	}
}

// TestSessionBoundToCaller: A's legacy session is 404 for B on POST, GET and
// DELETE, and still A's after a step-up.
func TestSessionBoundToCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{})
	alice := e.tokenFor("alice", "mcp")
	init := e.do(t, alice, rpc{method: "initialize", legacy: legacyVersion, params: map[string]any{
		"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}})
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %v %s", init.status, init.header, init.body)
	}
	bob := e.tokenFor("bob", "mcp")
	if r := e.do(t, bob, rpc{method: "ping", legacy: legacyVersion, sessID: sid}); r.status != http.StatusNotFound {
		t.Fatalf("bob POST on alice's session: %d %s", r.status, r.body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, e.resource, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
		req.Header.Set("Authorization", "Bearer "+bob)
		if r := e.send(t, req); r.status != http.StatusNotFound {
			t.Fatalf("bob %s on alice's session: %d %s", m, r.status, r.body)
		}
	}
	// Without a token, the session is not even looked up: 401.
	if r := e.do(t, "", rpc{method: "ping", legacy: legacyVersion, sessID: sid}); r.status != http.StatusUnauthorized {
		t.Fatalf("no token on a session: %d", r.status)
	}
	stepped := e.tokenFor("alice", "mcp admin")
	r := e.do(t, stepped, rpc{method: "tools/call", legacy: legacyVersion, sessID: sid, params: map[string]any{"name": "stepup", "arguments": map[string]any{}}})
	if r.status != 200 || r.text() != "admin done" {
		t.Fatalf("alice stepped up on her session: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.resource, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+stepped)
	if r := e.send(t, req); r.status != http.StatusOK && r.status != http.StatusNoContent {
		t.Fatalf("alice DELETE: %d %s", r.status, r.body)
	}
}

// TestNoSessionWithoutOwner: a token naming neither client nor subject gets
// no session (all such callers would share it); 403 when sessions are
// required.
func TestNoSessionWithoutOwner(t *testing.T) {
	t.Parallel()
	initReq := rpc{method: "initialize", legacy: legacyVersion, params: map[string]any{
		"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}}
	anon := func(e *env) string {
		return e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp", Extra: map[string]any{"sub": nil, "client_id": nil}})
	}
	e := newEnv(t, envConfig{})
	r := e.do(t, anon(e), initReq)
	if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("ownerless initialize: %d session %q %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}
	if r := e.do(t, e.tokenFor("alice", "mcp"), initReq); r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("alice got no session: %s", r.body)
	}
	s := newEnv(t, envConfig{srvOpts: func(o *core.ServerOptions) { o.Sessions = core.SessionsStateful }})
	if r := s.do(t, anon(s), initReq); r.status != http.StatusForbidden {
		t.Fatalf("ownerless initialize under SessionsStateful: %d %s", r.status, r.body)
	}
}

// TestStepUpBothEras: the run-time step-up is a 403 with the challenge in
// both eras, before the first notification; after it, a JSON-RPC error on
// the open stream.
func TestStepUpBothEras(t *testing.T) {
	t.Parallel()
	var logs mcptest.LogBuffer
	e := newEnv(t, envConfig{srvOpts: func(o *core.ServerOptions) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}})
	tok := e.token("mcp")
	stepped := want{status: 403, error: "insufficient_scope", scope: "mcp admin", code: core.CodeInvalidRequest}

	// 2026-07-28, asking for progress (an SSE answer, not yet started).
	q := call("stepup")
	q.meta = map[string]any{"progressToken": "p1"}
	check(t, e, e.do(t, tok, q), stepped)

	// Legacy 2025-11-25 (no session: stateless legacy request) and
	// 2025-03-26 batches are answered likewise.
	init := e.do(t, tok, rpc{method: "initialize", legacy: legacyVersion, params: map[string]any{
		"protocolVersion": legacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}})
	sid := init.header.Get("Mcp-Session-Id")
	check(t, e, e.do(t, tok, rpc{method: "tools/call", legacy: legacyVersion, sessID: sid, params: map[string]any{"name": "stepup", "arguments": map[string]any{}}}), stepped)
	check(t, e, e.do(t, tok, rpc{method: "tools/call", legacy: legacyVersion, sessID: sid, params: map[string]any{"name": "write", "arguments": map[string]any{}}}),
		want{status: 403, error: "insufficient_scope", scope: "mcp files:write", code: core.CodeInvalidRequest})

	// After a notification the stream has begun: the status cannot change.
	q = call("stream-stepup")
	q.meta = map[string]any{"progressToken": "p2"}
	r := e.do(t, tok, q)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || r.errCode() != core.CodeInvalidRequest {
		t.Fatalf("step-up after a notification: %d %v %s", r.status, r.header, r.body)
	}
	if !strings.Contains(string(r.body), "notifications/progress") {
		t.Fatalf("no progress notification: %s", r.body)
	}
	if !strings.Contains(logs.String(), "after the response stream began") {
		t.Fatalf("no warning for a status after the stream began; logs: %s", logs.String())
	}
}

// TestBatchRefusedWhole: a 2025-03-26 batch with one request lacking scopes
// runs none of them.
func TestBatchRefusedWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{})
	ran := 0
	core.AddTool(e.srv, &core.Tool{Name: "count", Description: "Counts its calls."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			ran++
			return "counted", nil
		})
	tok := e.token("mcp")
	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{}}}]`
	req, _ := http.NewRequest(http.MethodPost, e.resource, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", core.ProtocolVersion20250326)
	req.Header.Set("Authorization", "Bearer "+tok)
	r := e.send(t, req)
	if r.status != http.StatusForbidden || ran != 0 {
		t.Fatalf("batch: status %d, %d requests ran: %s", r.status, ran, r.body)
	}
	if ch := r.challenge(t); ch["scope"] != "mcp files:write" {
		t.Fatalf("batch challenge %v", ch)
	}
	_ = auth.ErrInsufficientScope
}
