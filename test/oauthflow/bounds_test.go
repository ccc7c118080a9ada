package oauthflow_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
)

// TestConcurrentChallenges: challenges that race for one token run one
// authorization; the others just retry with it.
func TestConcurrentChallenges(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{})
	rs := newRS(t, as, core.ModeAuto)
	src := oauth.New(codeConfig())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			resp := challenge401(`Bearer resource_metadata="` + rs.origin + `/.well-known/oauth-protected-resource/mcp"`)
			errs <- src.Challenge(t.Context(), rs.url, resp)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if auth, tok, reg := snapshot(as); len(auth) != 1 || len(tok) != 1 || len(reg) != 1 {
		t.Fatalf("authorizations %d, token requests %d, registrations %d; want 1 each", len(auth), len(tok), len(reg))
	}
}

// TestScopeFlood: a challenge naming a flood of scopes is refused before
// anything is fetched, instead of costing quadratic time in the scope
// bookkeeping.
func TestScopeFlood(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 50000 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("s")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(strings.Repeat("y", i/182))
	}
	as := newAS(t, authtest.Options{})
	rs := newRS(t, as, core.ModeAuto)
	src := oauth.New(codeConfig())
	resp := challenge401(`Bearer resource_metadata="` + rs.origin + `/.well-known/oauth-protected-resource/mcp", scope="` + b.String() + `"`)
	err := src.Challenge(t.Context(), rs.url, resp)
	if !errors.Is(err, oauth.ErrTooManyScopes) {
		t.Fatalf("err %v, want ErrTooManyScopes", err)
	}
	if auth, _, _ := snapshot(as); len(auth) != 0 {
		t.Fatal("authorization requested")
	}
}

// BenchmarkToken: the per-request cost of a Source with a valid token,
// beside client.StaticToken.
func BenchmarkToken(b *testing.B) {
	as := newAS(b, authtest.Options{})
	b.Run("static", func(b *testing.B) {
		ts := client.StaticToken("x")
		b.ReportAllocs()
		for b.Loop() {
			ts.Token(b.Context())
		}
	})
	b.Run("oauth", func(b *testing.B) {
		rs := newRS(b, as, core.ModeAuto)
		src := oauth.New(codeConfig())
		req, _ := http.NewRequest(http.MethodPost, rs.url, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if err := src.Challenge(b.Context(), rs.url, resp); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if tok, _ := src.Token(b.Context()); tok == "" {
				b.Fatal("no token")
			}
		}
	})
}
