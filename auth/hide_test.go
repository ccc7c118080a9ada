package auth_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

// listed returns the names tools/list gives the caller of tok.
func (e *env) listed(t *testing.T, tok string, q rpc) []string {
	t.Helper()
	r := e.do(t, tok, q)
	res, _ := r.msg["result"].(map[string]any)
	if r.status != http.StatusOK || res == nil {
		t.Fatalf("tools/list: HTTP %d %s", r.status, r.body)
	}
	var out []string
	for _, x := range res["tools"].([]any) {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

// TestHideUnauthorized: with Options.HideUnauthorized, tools/list leaves
// out what the token lacks the ToolScopes for (an implied scope counts),
// in both eras, and its cache scope stays private even when the hints say
// public; a direct call of a hidden tool is still the 403
// insufficient_scope challenge that asks for the scope. Without the
// option, every caller sees every tool.
func TestHideUnauthorized(t *testing.T) {
	t.Parallel()
	hide := newEnv(t, envConfig{
		opts: func(o *auth.Options, _ *authtest.Server, _ string) { o.HideUnauthorized = true },
		srvOpts: func(o *core.ServerOptions) {
			o.CacheHints = map[string]core.CacheHint{"tools/list": {TTL: 60e9, Scope: core.CacheScopePublic}}
		},
	})
	all := []string{"echo", "stepup", "stream-stepup", "write"}
	readOnly := []string{"echo", "stepup", "stream-stepup"}
	list := rpc{method: "tools/list"}
	if got := hide.listed(t, hide.token("mcp"), list); !slices.Equal(got, readOnly) {
		t.Errorf("tools without files:write: %v, want %v", got, readOnly)
	}
	if got := hide.listed(t, hide.token("mcp files:admin"), list); !slices.Equal(got, all) {
		t.Errorf("tools with files:admin (implies files:write): %v, want %v", got, all)
	}
	r := hide.do(t, hide.token("mcp"), list)
	if res := r.msg["result"].(map[string]any); res["cacheScope"] != "private" {
		t.Errorf("a per-token list: cacheScope %v, want private", res["cacheScope"])
	}
	// Legacy: initialize, then list in the session.
	tok := hide.token("mcp")
	init := hide.do(t, tok, rpc{method: "initialize", legacy: "2025-11-25", params: map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	sid := init.header.Get("Mcp-Session-Id")
	if got := hide.listed(t, tok, rpc{method: "tools/list", legacy: "2025-11-25", sessID: sid}); !slices.Equal(got, readOnly) {
		t.Errorf("legacy tools without files:write: %v, want %v", got, readOnly)
	}
	// The hidden tool's call is the step-up challenge, not "unknown".
	w := hide.do(t, hide.token("mcp"), call("write"))
	if w.status != http.StatusForbidden || w.challenge(t)["error"] != "insufficient_scope" || w.challenge(t)["scope"] != "mcp files:write" {
		t.Errorf("a call of the hidden tool: HTTP %d %v, want 403 insufficient_scope for mcp files:write", w.status, w.header)
	}

	plain := newEnv(t, envConfig{})
	if got := plain.listed(t, plain.token("mcp"), list); !slices.Equal(got, all) {
		t.Errorf("without HideUnauthorized: %v, want every tool %v", got, all)
	}
}
