package oauth_test

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

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
		if u, err := url.Parse(m.Resource); err != nil || u.Fragment != "" || !u.IsAbs() || !secure(u) {
			t.Fatalf("accepted resource %q", m.Resource)
		}
		for _, as := range m.AuthorizationServers {
			if u, err := url.Parse(as); err != nil || u.RawQuery != "" || u.Fragment != "" || !secure(u) {
				t.Fatalf("accepted authorization server %q", as)
			}
		}
	})
}

// secure: https with a host, or http to a loopback host.
func secure(u *url.URL) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host != ""
	case "http":
		return oauth.HostClass(u.Hostname()) == "loopback"
	}
	return false
}

// FuzzHostClass: a host in any spelling is classified as the address it
// spells: dotted and IPv6 literals as netip reads them, and the legacy
// decimal, hexadecimal and octal spellings of inet_aton(3) as the IPv4
// address they denote.
func FuzzHostClass(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "::ffff:127.0.0.1", "fe80::1%eth0", "localhost.", "10.1", "0x", "00", "1.2.3.4.5", "4294967296"} {
		f.Add(s, uint32(0x7f000001))
	}
	f.Fuzz(func(t *testing.T, host string, n uint32) {
		c := oauth.HostClass(host) // never panics
		if a, err := netip.ParseAddr(host); err == nil && c != oauth.LocalClass(a.WithZone("")) {
			t.Fatalf("HostClass(%q) = %q, LocalClass = %q", host, c, oauth.LocalClass(a))
		}
		want := oauth.LocalClass(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}))
		for _, spelled := range []string{
			strconv.FormatUint(uint64(n), 10),
			"0x" + strconv.FormatUint(uint64(n), 16),
			"0" + strconv.FormatUint(uint64(n), 8),
			fmt.Sprintf("%d.%d", n>>24, n&0xffffff),
			fmt.Sprintf("0x%x.%d.0%o.%d", n>>24, n>>16&0xff, n>>8&0xff, n&0xff),
		} {
			if got := oauth.HostClass(spelled); got != want {
				t.Fatalf("HostClass(%q) = %q, want %q (%d)", spelled, got, want, n)
			}
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
