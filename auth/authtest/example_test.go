package authtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

// A protected resource (package auth) trusts the authorization server on
// loopback: a request without a token gets 401 and a challenge, one with a
// token the server minted gets 200.
func Example() {
	as := authtest.New(nil) // a real authorization server on loopback
	defer as.Close()

	rs, err := auth.New(&auth.Options{
		Resource:   "https://mcp.example.com/mcp",
		Issuers:    []auth.Issuer{{Issuer: as.Issuer}},
		Required:   []string{"mcp"},
		HTTPClient: as.Client(),
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
	r = post(as.Mint(authtest.Claims{Audience: []string{"https://mcp.example.com/mcp"}, Scope: "mcp"}))
	fmt.Println(r.Code)
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"
	// 200
}
