package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/core"
)

func ExampleNew() {
	rs, err := auth.New(&auth.Options{
		Resource: "https://mcp.example.com/mcp",
		Issuers:  []auth.Issuer{{Issuer: "https://auth.example.com"}},
		Required: []string{"mcp"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"}, &core.ServerOptions{Authenticator: rs})
	core.AddTool(srv, &core.Tool{Name: "whoami", Description: "Names the caller."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return auth.TokenInfoFromContext(ctx).Subject, nil
		})

	post := func(token string) *httptest.ResponseRecorder {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	r := post("")
	fmt.Println(r.Code, r.Header().Get("WWW-Authenticate"))
	// A request with a valid token from https://auth.example.com gets 200
	// (package authtest's example verifies tokens of a real authorization
	// server on loopback).
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"
}

type purgeArgs struct {
	All bool `json:"all"`
}

// A tool asks for a broader scope at run time, depending on its arguments:
// the client gets 403 insufficient_scope, obtains the scope and retries.
func ExampleRequireScopes() {
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "purge", Description: "Delete notes."},
		func(ctx context.Context, req *core.CallToolRequest, in purgeArgs) (string, error) {
			if in.All {
				if err := auth.RequireScopes(ctx, "notes:admin"); err != nil {
					return "", err
				}
			}
			return "purged", nil
		})
}

// A resource that accepts only DPoP-bound access tokens (RFC 9449; MCP
// SEP-1932), and demands its own nonces: each request carries
// "Authorization: DPoP <token>" and a DPoP proof signed by the key the
// token's cnf.jkt names, for this method and URL. Without credentials the
// client is told, in the challenge, which proof algorithms are accepted.
func ExampleDPoPOptions() {
	rs, err := auth.New(&auth.Options{
		Resource: "https://mcp.example.com/mcp",
		Issuers:  []auth.Issuer{{Issuer: "https://auth.example.com"}},
		Required: []string{"mcp"},
		DPoP: &auth.DPoPOptions{
			Required:   true,
			Algorithms: []string{"ES256", "EdDSA"},
			// Shared by every replica, so that each accepts the others'
			// nonces (a secret in real deployments).
			NonceKey: []byte("0123456789abcdef0123456789abcdef"),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"}, &core.ServerOptions{Authenticator: rs})
	core.AddTool(srv, &core.Tool{Name: "whoami", Description: "Names the caller's key."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			// The RFC 7638 thumbprint of the key the proof was signed with.
			return auth.TokenInfoFromContext(ctx).DPoPThumbprint, nil
		})

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("WWW-Authenticate"))
	// Output:
	// 401 DPoP resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp", algs="ES256 EdDSA"
}
