package auth_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

var authVars = []string{"MCPFN_AUTH_RESOURCE", "MCPFN_AUTH_ISSUER", "MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_SCOPES", "MCPFN_AUTH_METADATA_URL", "MCPFN_AUTH_METADATA_PATH"}

func setAuthEnv(t *testing.T, kv ...string) {
	t.Helper()
	for _, k := range authVars {
		t.Setenv(k, "")
	}
	mcptest.Setenv(t, kv...)
}

func TestFromEnvUnset(t *testing.T) {
	setAuthEnv(t)
	rs, err := auth.FromEnv(nil)
	if rs != nil || err != nil {
		t.Fatalf("FromEnv() = %v, %v; want nil, nil", rs, err)
	}
}

func TestFromEnvErrors(t *testing.T) {
	for name, c := range map[string]struct {
		kv    []string
		names []string // what the error must name
	}{
		"resource no issuer":     {[]string{"MCPFN_AUTH_RESOURCE", "https://fn.example/mcp"}, []string{"MCPFN_AUTH_ISSUER"}},
		"issuer no resource":     {[]string{"MCPFN_AUTH_ISSUER", "https://as.example"}, []string{"MCPFN_AUTH_ISSUER", "MCPFN_AUTH_RESOURCE"}},
		"scopes no resource":     {[]string{"MCPFN_AUTH_SCOPES", "mcp"}, []string{"MCPFN_AUTH_SCOPES", "MCPFN_AUTH_RESOURCE"}},
		"jwks no resource":       {[]string{"MCPFN_AUTH_JWKS_URL", "https://as.example/jwks"}, []string{"MCPFN_AUTH_JWKS_URL", "MCPFN_AUTH_RESOURCE"}},
		"metadata no resource":   {[]string{"MCPFN_AUTH_METADATA_PATH", "/meta"}, []string{"MCPFN_AUTH_METADATA_PATH", "MCPFN_AUTH_RESOURCE"}},
		"resource not a URL":     {[]string{"MCPFN_AUTH_RESOURCE", "fn.example", "MCPFN_AUTH_ISSUER", "https://as.example"}, []string{"MCPFN_AUTH_RESOURCE", "fn.example"}},
		"metadata URL elsewhere": {[]string{"MCPFN_AUTH_RESOURCE", "https://fn.example/mcp", "MCPFN_AUTH_ISSUER", "https://as.example", "MCPFN_AUTH_METADATA_URL", "ftp://fn.example/meta"}, []string{"MCPFN_AUTH_*"}},
	} {
		t.Run(name, func(t *testing.T) {
			setAuthEnv(t, c.kv...)
			rs, err := auth.FromEnv(nil)
			if err == nil {
				t.Fatalf("FromEnv() = %v, want an error", rs)
			}
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
		})
	}
}

// Every variable reaches the protected resource: the metadata document
// (resource, issuer, scopes) at the well-known path and at
// MCPFN_AUTH_METADATA_PATH, challenges naming MCPFN_AUTH_METADATA_URL, and a token of the issuer verified with the
// keys at MCPFN_AUTH_JWKS_URL.
func TestFromEnv(t *testing.T) {
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	// The keys at a URL of their own, which only MCPFN_AUTH_JWKS_URL names.
	var keysServed atomic.Int64
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(as.Issuer + "/jwks")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		keysServed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(keys.Close)
	const res = "https://fn.example/mcp"
	setAuthEnv(t, "MCPFN_AUTH_RESOURCE", res, "MCPFN_AUTH_ISSUER", as.Issuer, "MCPFN_AUTH_JWKS_URL", keys.URL+"/keys",
		"MCPFN_AUTH_SCOPES", "mcp:read  mcp:write",
		"MCPFN_AUTH_METADATA_URL", "https://fn.example/fn/meta", "MCPFN_AUTH_METADATA_PATH", "/meta")
	rs, err := auth.FromEnv(nil)
	if err != nil || rs == nil {
		t.Fatalf("FromEnv() = %v, %v", rs, err)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/meta"} {
		doc, err := rs.Metadata(httptest.NewRequest(http.MethodGet, "https://fn.example"+p, nil))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, want := range []string{`"resource":"` + res + `"`, `"authorization_servers":["` + as.Issuer + `"]`, `"scopes_supported":["mcp:read","mcp:write"]`} {
			if !strings.Contains(string(doc), want) {
				t.Errorf("%s: %s lacks %s", p, doc, want)
			}
		}
	}
	if rs.MetadataURL() != "https://fn.example/fn/meta" {
		t.Errorf("MetadataURL() = %q", rs.MetadataURL())
	}
	req := httptest.NewRequest(http.MethodPost, res, nil)
	req.Header.Set("Authorization", "Bearer "+as.Mint(authtest.Claims{Audience: []string{res}, Scope: "mcp:read mcp:write"}))
	if _, err := rs.Authenticate(req); err != nil {
		t.Errorf("a token of MCPFN_AUTH_ISSUER: %v", err)
	}
	if keysServed.Load() == 0 {
		t.Error("the keys were not fetched from MCPFN_AUTH_JWKS_URL")
	}
}
