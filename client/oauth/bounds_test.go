package oauth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestNoRedirects: a metadata URL that redirects is not followed.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/target" {
			hits.Add(1)
			mcptest.WriteJSON(w, 200, map[string]any{"resource": "http://127.0.0.1:9/mcp", "authorization_servers": []string{"http://127.0.0.1:9"}})
			return
		}
		http.Redirect(w, r, "/target", http.StatusFound)
	}))
	defer srv.Close()
	err := oauth.New(codeConfig()).Challenge(t.Context(), "http://127.0.0.1:9/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/prm"`))
	if err == nil || hits.Load() != 0 {
		t.Fatalf("err %v, redirect target fetched %d times", err, hits.Load())
	}
}

// TestInsecureURLs: plain http is refused except to loopback hosts, before
// any request.
func TestInsecureURLs(t *testing.T) {
	t.Parallel()
	err := oauth.New(codeConfig()).Challenge(t.Context(), "http://127.0.0.1:9/mcp", challenge401(`Bearer resource_metadata="http://metadata.example.com/prm"`))
	if !errors.Is(err, oauth.ErrInsecureURL) {
		t.Fatalf("http PRM URL: %v", err)
	}
	_, err = oauth.DecodeServerMetadata([]byte(`{"issuer":"https://as.example.com","token_endpoint":"http://as.example.com/token"}`), "https://as.example.com")
	if !errors.Is(err, oauth.ErrInsecureURL) {
		t.Fatalf("http token endpoint: %v", err)
	}
	for _, ok := range []string{"https://as.example.com/token", "http://localhost:8080/t", "http://127.0.0.1/t", "http://[::1]:1/t"} {
		if _, err := oauth.DecodeServerMetadata([]byte(`{"issuer":"i","token_endpoint":"`+ok+`"}`), "i"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestOversizeMetadata: a metadata document past 256 KiB is refused; the
// client stops reading there.
func TestOversizeMetadata(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for range 1024 { // 64 MiB if nobody stops us
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	err := oauth.New(codeConfig()).Challenge(t.Context(), srv.URL+"/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/prm"`))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v", err)
	}
	srv.CloseClientConnections()
	if w := written.Load(); w > 32<<20 {
		t.Fatalf("server wrote %d bytes", w)
	}
}

// TestOAuthErrorFields: every member of a token error response is kept,
// extension members such as max_age (RFC 9470 §3) included.
func TestOAuthErrorFields(t *testing.T) {
	t.Parallel()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			mcptest.WriteJSON(w, 200, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
		case "/.well-known/oauth-authorization-server":
			mcptest.WriteJSON(w, 200, map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token"})
		case "/token":
			mcptest.WriteJSON(w, 400, map[string]any{"error": "insufficient_user_authentication",
				"error_description": "more", "max_age": 300, "acr_values": "urn:mace:incommon:iap:silver"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	src := oauth.New(&oauth.Config{Grant: oauth.GrantClientCredentials,
		Clients: func(iss string) (oauth.Client, bool) { return oauth.Client{ID: "svc", Secret: "pw", Issuer: iss}, true }})
	err := src.Challenge(t.Context(), srv.URL+"/mcp", challenge401(`Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`))
	var oe *oauth.OAuthError
	if !errors.As(err, &oe) || oe.Code != "insufficient_user_authentication" {
		t.Fatalf("err %v", err)
	}
	for k, want := range map[string]string{"max_age": `300`, "acr_values": `"urn:mace:incommon:iap:silver"`,
		"error": `"insufficient_user_authentication"`, "error_description": `"more"`} {
		if got := string(oe.Fields[k]); got != want {
			t.Errorf("Fields[%s] = %s, want %s", k, got, want)
		}
	}
}
