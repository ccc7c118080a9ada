package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// protected starts an MCP server that wants a bearer token, and on the same
// origin a minimal authorization server (RFC 8414 metadata, RFC 7591
// registration, authorize with PKCE S256 and iss, token).
func protected(t *testing.T) (endpoint string, registered func() map[string]any) {
	srv := core.NewServer(core.Implementation{Name: "cli-oauth", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "secret", nil
	})
	var (
		mu        sync.Mutex
		reg       map[string]any
		challenge string
		redirect  string
	)
	const token = "cli-access-token"
	mux := http.NewServeMux()
	var base string
	mux.Handle("/mcp", nethttp.NewHandler(srv, &nethttp.Options{Middleware: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(401)
				return
			}
			h.ServeHTTP(w, r)
		})
	}}))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		mcptest.WriteJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		mcptest.WriteJSON(w, 200, map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		json.NewDecoder(r.Body).Decode(&reg)
		uris, _ := reg["redirect_uris"].([]any)
		if len(uris) == 1 {
			redirect, _ = uris[0].(string)
		}
		mu.Unlock()
		mcptest.WriteJSON(w, 201, map[string]any{"client_id": "cli", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		ok := q.Get("redirect_uri") == redirect && q.Get("client_id") == "cli" && q.Get("code_challenge_method") == "S256"
		challenge = q.Get("code_challenge")
		mu.Unlock()
		if !ok {
			http.Error(w, "bad authorization request", 400)
			return
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {"c1"}, "state": {q.Get("state")}, "iss": {base}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		mu.Lock()
		ok := r.PostForm.Get("code") == "c1" && base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
		mu.Unlock()
		if !ok {
			mcptest.WriteJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		mcptest.WriteJSON(w, 200, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 60})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	base = ts.URL
	return ts.URL + "/mcp", func() map[string]any { mu.Lock(); defer mu.Unlock(); return reg }
}

// TestOAuthFlag: --oauth runs the browser flow; the "browser" here is an
// HTTP client that follows the authorization server's redirect to the
// loopback listener.
func TestOAuthFlag(t *testing.T) {
	endpoint, registered := protected(t)
	var opened []string
	old := openBrowser
	openBrowser = func(u string) error {
		opened = append(opened, u)
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	t.Cleanup(func() { openBrowser = old })

	code, out, errs := mcpfn(t, "", "call", endpoint, "echo", "--oauth")
	if code != 0 || !strings.Contains(out, `"secret"`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errs)
	}
	if len(opened) != 1 || !strings.Contains(errs, opened[0]) {
		t.Fatalf("opened %v; stderr %s", opened, errs)
	}
	reg := registered()
	uris, _ := reg["redirect_uris"].([]any)
	if reg["application_type"] != "native" || len(uris) != 1 || !strings.HasPrefix(uris[0].(string), "http://127.0.0.1:") {
		t.Fatalf("registration %v", reg)
	}
	// Without --oauth the same server is a failure (exit 3).
	if code, _, _ := mcpfn(t, "", "tools", endpoint); code != exitFailure {
		t.Fatalf("without --oauth: exit %d", code)
	}
}
