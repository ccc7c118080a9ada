package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
)

// A machine client: the client_credentials grant with a pre-registered
// client. The server here is an MCP server and its authorization server on
// one origin.
func Example_clientCredentials() {
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "hello"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "hello, machine", nil
	})
	var base string
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t0k3n" {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}}))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"issuer": base, "token_endpoint": base + "/token",
			"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if r.FormValue("grant_type") != "client_credentials" || id != "svc" || secret != "s3cret" || r.FormValue("resource") != base+"/mcp" {
			w.WriteHeader(http.StatusBadRequest)
			js(w, map[string]string{"error": "invalid_client"})
			return
		}
		js(w, map[string]any{"access_token": "t0k3n", "token_type": "Bearer", "expires_in": 3600})
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	base = ts.URL

	src := oauth.New(&oauth.Config{
		Grant: oauth.GrantClientCredentials,
		// The client is registered with one authorization server: its
		// secret goes to that issuer only.
		Clients: func(issuer string) (oauth.Client, bool) {
			return oauth.Client{ID: "svc", Secret: "s3cret", Issuer: base}, issuer == base
		},
	})
	ctx := context.Background()
	c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{TokenSource: src})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "hello", nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if t, ok := res.Content[0].(*core.TextContent); ok {
		fmt.Println(t.Text)
	}
	// Output: hello, machine
}

// A command-line client: the authorization code flow in the user's
// browser, with a loopback redirect.
func ExampleNewLoopback() {
	lb, err := oauth.NewLoopback(func(authURL string) error {
		return exec.Command("xdg-open", authURL).Start()
	})
	if err != nil {
		return
	}
	defer lb.Close()
	src := oauth.New(&oauth.Config{RedirectURL: lb.RedirectURL(), Authorize: lb.Authorize})
	c, err := client.Connect(context.Background(), "https://mcp.example.com/mcp", &client.Options{TokenSource: src})
	if err != nil {
		return
	}
	defer c.Close()
}
