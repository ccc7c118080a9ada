package authtest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
)

// A test of a protected resource (package auth) points it at the server
// (Issuer, and Client to reach it) and presents tokens the server mints.
// The protected resource fetches the server's metadata and keys as it
// would a real authorization server's.
func Example() {
	as := authtest.New(nil) // a real authorization server on loopback
	defer as.Close()

	rs, err := auth.New(&auth.Options{
		Resource:   "https://mcp.example.com/mcp",
		Issuers:    []auth.Issuer{{Issuer: as.Issuer}},
		HTTPClient: as.Client(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tok := as.Mint(authtest.Claims{Subject: "alice", Audience: []string{"https://mcp.example.com/mcp"}, Scope: "mcp"})
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	ctx, err := rs.Authenticate(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	ti := auth.TokenInfoFromContext(ctx)
	fmt.Println(ti.Subject, ti.ClientID, ti.Scopes)
	// Output:
	// alice client-1 [mcp]
}
