package core_test

import (
	"net/http"
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
