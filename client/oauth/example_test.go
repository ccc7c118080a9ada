package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"

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

// mcpAndAS serves, on one origin, an MCP server whose tool "hello" answers
// text, behind guard (which answers 401 with challenge when it returns
// false), its protected resource metadata, and authorization server
// metadata meta (issuer and token_endpoint added) whose token endpoint is
// token.
func mcpAndAS(text string, guard func(r *http.Request) bool, challenge string, meta map[string]any, token http.HandlerFunc) *httptest.Server {
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "hello"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return text, nil
	})
	var base string
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !guard(r) {
				w.Header().Set("WWW-Authenticate", challenge+` resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
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
		m := map[string]any{"issuer": base, "token_endpoint": base + "/token"}
		for k, v := range meta {
			m[k] = v
		}
		js(w, m)
	})
	mux.HandleFunc("/token", token)
	ts := httptest.NewServer(mux)
	base = ts.URL
	return ts
}

// callHello connects to endpoint with src and prints what the tool
// "hello" answers.
func callHello(endpoint string, src *oauth.Source) {
	ctx := context.Background()
	c, err := client.Connect(ctx, endpoint, &client.Options{TokenSource: src})
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
}

// DPoP-bound tokens (RFC 9449; MCP SEP-1932): with Config.DPoP at
// DPoPAuto (the default), a Source whose authorization server lists
// dpop_signing_alg_values_supported sends a DPoP proof with its token
// request; a token issued with token_type DPoP is then sent as
// "Authorization: DPoP <token>" with a fresh proof on every MCP request,
// so a stolen token is useless without the key. DPoPRequire refuses
// Bearer tokens; DPoPKey sets the key (default: a P-256 key made once per
// Source). The servers here only look for the headers; package auth
// checks the proofs (auth.DPoPOptions).
func Example_dpop() {
	ts := mcpAndAS("hello, key holder",
		func(r *http.Request) bool {
			return r.Header.Get("Authorization") == "DPoP t0k3n" && r.Header.Get("DPoP") != ""
		},
		`DPoP algs="ES256"`,
		map[string]any{"grant_types_supported": []string{"client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"dpop_signing_alg_values_supported":     []string{"ES256"}},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.Header.Get("DPoP") == "" {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_dpop_proof"})
				return
			}
			// A real authorization server puts the key's thumbprint in
			// the token's cnf.jkt.
			json.NewEncoder(w).Encode(map[string]any{"access_token": "t0k3n", "token_type": "DPoP", "expires_in": 3600})
		})
	defer ts.Close()

	src := oauth.New(&oauth.Config{
		Grant: oauth.GrantClientCredentials,
		Clients: func(issuer string) (oauth.Client, bool) {
			return oauth.Client{ID: "svc", Secret: "s3cret", Issuer: ts.URL}, issuer == ts.URL
		},
		DPoP: oauth.DPoPRequire,
	})
	callHello(ts.URL+"/mcp", src)
	// Output: hello, key holder
}

// Workload identity federation (MCP SEP-1933): a workload with no secret
// of its own presents the JWT its platform issues it (a Kubernetes
// projected service account token, a cloud's identity token file) as the
// RFC 7523 jwt-bearer assertion. AssertionFile reads the file anew for
// each token request, so the platform's renewals are picked up.
func Example_workloadIdentity() {
	dir, err := os.MkdirTemp("", "wif")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	tokenFile := filepath.Join(dir, "token")
	// The platform writes and renews this file; here, a stand-in JWT.
	if err := os.WriteFile(tokenFile, []byte("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln\n"), 0o600); err != nil {
		fmt.Println(err)
		return
	}

	ts := mcpAndAS("hello, workload",
		func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer t0k3n" },
		"Bearer",
		map[string]any{"grant_types_supported": []string{oauth.GrantJWTBearer},
			"token_endpoint_auth_methods_supported": []string{"none"}},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			// A real authorization server verifies the assertion's
			// signature against the workload's identity provider (its
			// trust policy names the issuer and subject).
			if r.FormValue("grant_type") != oauth.GrantJWTBearer || r.FormValue("assertion") != "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln" {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"access_token": "t0k3n", "token_type": "Bearer", "expires_in": 3600})
		})
	defer ts.Close()

	src := oauth.New(&oauth.Config{
		Grant:     oauth.GrantJWTBearer,
		Assertion: oauth.AssertionFile(tokenFile),
		// The client the workload is registered as with the authorization
		// server; the assertion authenticates it, so it has no secret.
		Clients: func(issuer string) (oauth.Client, bool) {
			return oauth.Client{ID: "workload", Issuer: ts.URL, AuthMethod: oauth.AuthNone}, issuer == ts.URL
		},
	})
	callHello(ts.URL+"/mcp", src)
	// Output: hello, workload
}
