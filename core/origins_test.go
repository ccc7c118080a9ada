package core_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestAllowedOriginsValidated checks that ServerOptions.Validate accepts
// exactly the AllowedOrigins entries the door can match (an Origin header
// as browsers serialize it: scheme://host[:port], lower case, no default
// port, no path), and says how to write the others.
func TestAllowedOriginsValidated(t *testing.T) {
	t.Parallel()
	for _, o := range []string{"*", "https://example.com", "http://localhost:8080", "https://[::1]:8443",
		"http://127.0.0.1:3000", "chrome-extension://abcdefghijklmnop", "https://xn--bcher-kva.example"} {
		if err := (&core.ServerOptions{AllowedOrigins: []string{o}}).Validate(); err != nil {
			t.Errorf("%q: %v", o, err)
			continue
		}
		srv := core.NewServer(testImpl, &core.ServerOptions{AllowedOrigins: []string{o}})
		origin := o
		if o == "*" {
			origin = "https://anywhere.example"
		}
		if r := mreq(1, "server/discover", nil).withHeader("Origin", origin).do(t, srv); r.Status != http.StatusOK {
			t.Errorf("%q is valid but the door refuses Origin %q: HTTP %d", o, origin, r.Status)
		}
	}
	for o, want := range map[string]string{
		"https://example.com/":         `did you mean "https://example.com"`,
		"https://Example.com":          `did you mean "https://example.com"`,
		"HTTPS://example.com":          `did you mean "https://example.com"`,
		"https://example.com/app":      `did you mean "https://example.com"`,
		"https://example.com:443":      `did you mean "https://example.com"`,
		"http://example.com:80":        `did you mean "http://example.com"`,
		"https://example.com?x=1":      `did you mean "https://example.com"`,
		"https://user@example.com":     `did you mean "https://example.com"`,
		"https://example.com:0":        "port",
		"https://example.com:65536":    "port",
		"https://example.com:08080":    "port",
		"example.com":                  "scheme://host",
		"":                             "scheme://host",
		" https://example.com":         "scheme://host",
		"https://":                     "host",
		"https://[::0001]":             `did you mean "https://[::1]"`,
		"https://bücher.example":       "xn--",
		"null":                         "null",
		"https://example.com, https:/": "scheme://host",
	} {
		err := (&core.ServerOptions{AllowedOrigins: []string{"https://ok.example", o}}).Validate()
		if err == nil {
			t.Errorf("%q: accepted", o)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "AllowedOrigins[1]") || !strings.Contains(msg, want) {
			t.Errorf("%q: %q does not name the entry and say %q", o, msg, want)
		}
	}
}

// TestAllowedOriginsEmpty checks that an empty, non-nil AllowedOrigins
// refuses every request that carries Origin (loopback and the server's own
// origin included) while nil keeps the defaults, and that requests without
// Origin pass either way.
func TestAllowedOriginsEmpty(t *testing.T) {
	t.Parallel()
	loopback := context.WithValue(context.Background(), http.LocalAddrContextKey,
		net.Addr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	for _, c := range []struct {
		name    string
		allowed []string
		origin  string
		onLoop  bool
		want    int
	}{
		{"nil, own origin", nil, "http://example.com", false, http.StatusOK},
		{"nil, loopback origin on loopback", nil, "http://localhost:5173", true, http.StatusOK},
		{"nil, foreign origin", nil, "https://evil.example", false, http.StatusForbidden},
		{"empty, own origin", []string{}, "http://example.com", false, http.StatusForbidden},
		{"empty, loopback origin on loopback", []string{}, "http://localhost:5173", true, http.StatusForbidden},
		{"empty, foreign origin", []string{}, "https://evil.example", false, http.StatusForbidden},
		{"empty, no Origin", []string{}, "", false, http.StatusOK},
		{"empty, no Origin on loopback", []string{}, "", true, http.StatusOK},
	} {
		srv := core.NewServer(testImpl, &core.ServerOptions{AllowedOrigins: c.allowed})
		hr := mreq(1, "server/discover", nil).withHeader("Origin", c.origin).httpRequest("/mcp")
		if c.onLoop {
			hr.Host = "localhost:8080"
			hr = hr.WithContext(loopback)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, hr)
		r := parseResp(t, rec.Code, rec.Header(), rec.Body.Bytes())
		if r.Status != c.want {
			t.Errorf("%s: HTTP %d, want %d: %s", c.name, r.Status, c.want, r.Body)
		}
		if c.want == http.StatusForbidden && r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: CORS header on a refused request", c.name)
		}
	}
}
