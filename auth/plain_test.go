package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

func TestPlainAuth(t *testing.T) {
	t.Parallel()
	basic, err := auth.Basic(auth.PlainOptions{Realm: "mcp", Credentials: map[string]string{"alice": "s3cret"},
		Verify: func(ctx context.Context, user, pw string) (string, bool) { return user, user == "bob" && pw == "pw" }})
	if err != nil {
		t.Fatal(err)
	}
	bearer, err := auth.Bearer(auth.PlainOptions{Realm: "mcp", Credentials: map[string]string{"key-1": "svc-a"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		a         core.Authenticator
		header    []string
		status    int
		challenge string
		subject   string
	}{
		{"basic ok", basic, []string{"Basic YWxpY2U6czNjcmV0"}, 200, "", "alice"},
		{"basic verify", basic, []string{"Basic Ym9iOnB3"}, 200, "", "bob"},
		{"basic wrong password", basic, []string{"Basic YWxpY2U6bm9wZQ=="}, 401, `Basic realm="mcp", charset="UTF-8"`, ""},
		{"basic none", basic, nil, 401, `Basic realm="mcp", charset="UTF-8"`, ""},
		{"basic bad base64", basic, []string{"Basic !!!"}, 401, `Basic realm="mcp", charset="UTF-8"`, ""},
		{"basic twice", basic, []string{"Basic YWxpY2U6czNjcmV0", "Basic YWxpY2U6czNjcmV0"}, 401, `Basic realm="mcp", charset="UTF-8"`, ""},
		{"bearer ok", bearer, []string{"Bearer key-1"}, 200, "", "svc-a"},
		{"bearer wrong", bearer, []string{"Bearer key-2"}, 401, `Bearer realm="mcp"`, ""},
		{"bearer prefix of key", bearer, []string{"Bearer key-"}, 401, `Bearer realm="mcp"`, ""},
		{"bearer other scheme", bearer, []string{"Basic a2V5LTE="}, 401, `Bearer realm="mcp"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got *core.Principal
			srv := core.NewServer(core.Implementation{Name: "plain", Version: "1"}, &core.ServerOptions{Authenticator: c.a})
			core.AddTool(srv, &core.Tool{Name: "who", Description: "Who."}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
				got = req.Principal
				return "ok", nil
			})
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"who",`+
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "who"} {
				req.Header.Set(k, v)
			}
			req.Header["Authorization"] = c.header
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != c.status || rec.Header().Get("WWW-Authenticate") != c.challenge {
				t.Fatalf("%d %q, want %d %q: %s", rec.Code, rec.Header().Get("WWW-Authenticate"), c.status, c.challenge, rec.Body)
			}
			if c.subject != "" && (got == nil || got.Subject != c.subject) {
				t.Fatalf("principal %+v, want subject %s", got, c.subject)
			}
			// No metadata document.
			if doc, err := c.a.Metadata(httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil)); doc != nil || err != nil {
				t.Fatalf("metadata %s %v", doc, err)
			}
		})
	}
	for name, o := range map[string]auth.PlainOptions{
		"no realm": {Credentials: map[string]string{"a": "b"}}, "nothing": {Realm: "r"},
		"colon user": {Realm: "r", Credentials: map[string]string{"a:b": "c"}},
	} {
		if _, err := auth.Basic(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// noArgs is the input of a tool that takes no arguments.
type noArgs struct{}
