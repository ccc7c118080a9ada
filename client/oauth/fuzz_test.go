package oauth_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
)

// FuzzDecodeResourceMetadata: any input decodes or fails cleanly; what
// decodes has a resource and an authorization server.
func FuzzDecodeResourceMetadata(f *testing.F) {
	for _, s := range []string{
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"scopes_supported":["a"]}`,
		`{"resource":"https://mcp.example.com/mcp#frag","authorization_servers":["x"]}`,
		`{"resource":"","authorization_servers":[]}`, `[]`, `null`, `{"resource":1}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := oauth.DecodeResourceMetadata(b)
		if err != nil {
			return
		}
		if m.Resource == "" || len(m.AuthorizationServers) == 0 {
			t.Fatalf("accepted %q", b)
		}
		if u, err := url.Parse(m.Resource); err != nil || u.Fragment != "" || !u.IsAbs() {
			t.Fatalf("accepted resource %q", m.Resource)
		}
	})
}

// FuzzDecodeServerMetadata: what decodes has exactly the expected issuer
// and secure endpoints.
func FuzzDecodeServerMetadata(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://as.example.com","authorization_endpoint":"https://as.example.com/a","token_endpoint":"https://as.example.com/t","code_challenge_methods_supported":["S256"]}`), "https://as.example.com")
	f.Add([]byte(`{"issuer":"https://as.example.com/","token_endpoint":"https://as.example.com/t"}`), "https://as.example.com")
	f.Add([]byte(`{"issuer":"i","token_endpoint":"http://evil.example.com/t"}`), "i")
	f.Add([]byte(`{"issuer":"i","token_endpoint":"http://127.0.0.1/t","registration_endpoint":"ftp://x"}`), "i")
	f.Fuzz(func(t *testing.T, b []byte, issuer string) {
		m, err := oauth.DecodeServerMetadata(b, issuer)
		if err != nil {
			return
		}
		if m.Issuer != issuer || m.TokenEndpoint == "" {
			t.Fatalf("accepted issuer %q for %q", m.Issuer, issuer)
		}
		for _, e := range []string{m.TokenEndpoint, m.AuthorizationEndpoint, m.RegistrationEndpoint} {
			if e == "" {
				continue
			}
			u, err := url.Parse(e)
			scheme := strings.ToLower(u.Scheme)
			host := strings.ToLower(u.Hostname())
			loop := host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" || strings.HasPrefix(host, "0:0:0:0:0:0:0:1") || strings.HasPrefix(host, "::ffff:127.")
			if err != nil || !(scheme == "https" && u.Host != "" || scheme == "http" && loop) {
				t.Fatalf("accepted endpoint %q", e)
			}
		}
	})
}

// FuzzBearerChallenge: the WWW-Authenticate parsing the Source relies on
// (package client's parser) never panics, and a challenge built from the
// parsed resource_metadata and scope parses back to the same values.
func FuzzBearerChallenge(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
		`Bearer error="insufficient_scope", scope="files:write", error_description="need \"write\""`,
		`Basic realm="x", Bearer scope=a`, `Bearer`, `Bearer abc==`, `, ,Bearer ,scope="`, `DPoP algs="ES256", Bearer`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := map[string][]string{"Www-Authenticate": {s}}
		p, ok := client.BearerChallenge(h)
		if !ok {
			return
		}
		rm, sc := p["resource_metadata"], p["scope"]
		q := func(v string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"` }
		again, ok := client.BearerChallenge(map[string][]string{"Www-Authenticate": {"Bearer resource_metadata=" + q(rm) + ", scope=" + q(sc)}})
		if !ok || again["resource_metadata"] != rm || again["scope"] != sc {
			t.Fatalf("round trip of %q: %q %q → %v", s, rm, sc, again)
		}
	})
}
