package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/lambdalocal"
)

type noArgs struct{}

// TestAuthThroughDoor runs an OAuth-protected server behind every front
// door, buffered and streaming: the Authorization header reaches the
// function, the 401/403 challenges and the metadata document reach the
// client, and a step-up works.
func TestAuthThroughDoor(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	for _, door := range doors {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", door, streaming), func(t *testing.T) {
				t.Parallel()
				var h http.Handler
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
				defer ts.Close()
				resource := ts.URL + "/mcp"
				rs, err := auth.New(&auth.Options{
					Resource: resource, Issuers: []auth.Issuer{{Issuer: as.Issuer}}, HTTPClient: as.Client(),
					Required: []string{"mcp"}, ToolScopes: map[string][]string{"write": {"write"}},
				})
				if err != nil {
					t.Fatal(err)
				}
				srv := core.NewServer(core.Implementation{Name: "door-auth", Version: "1"}, &core.ServerOptions{Authenticator: rs})
				core.AddTool(srv, &core.Tool{Name: "write", Description: "Writes."},
					func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
						return "written by " + req.Principal.Subject, nil
					})
				h = &lambdalocal.Door{Integration: door, Mode: expectedMode(door, streaming), Timeout: 10 * time.Second,
					Function: wrapInvoker{lambda.Wrap(srv, &lambda.Options{Streaming: streaming})}, Logger: testLogger(t)}

				res, body := do(t, http.MethodGet, ts.URL+"/.well-known/oauth-protected-resource/mcp", nil, nil)
				if res.StatusCode != 200 || !strings.Contains(string(body), `"resource":"`+resource+`"`) {
					t.Fatalf("metadata: %d %s", res.StatusCode, body)
				}
				call := toolCall("write", "{}")
				hdr := func(tok string) http.Header { return toolCallHeader("write", tok) }
				res, body = do(t, http.MethodPost, resource, call, hdr(""))
				if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`) {
					t.Fatalf("no token: %d %v %s", res.StatusCode, res.Header, body)
				}
				tok := as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp"})
				res, body = do(t, http.MethodPost, resource, call, hdr(tok))
				if res.StatusCode != 403 || !strings.Contains(res.Header.Get("WWW-Authenticate"), `scope="mcp write", error="insufficient_scope"`) {
					t.Fatalf("step-up needed: %d %v %s", res.StatusCode, res.Header, body)
				}
				tok = as.Mint(authtest.Claims{Audience: []string{resource}, Scope: "mcp write"})
				res, body = do(t, http.MethodPost, resource, call, hdr(tok))
				if res.StatusCode != 200 || !strings.Contains(string(body), "written by user-1") {
					t.Fatalf("stepped up: %d %s", res.StatusCode, body)
				}
			})
		}
	}
}
