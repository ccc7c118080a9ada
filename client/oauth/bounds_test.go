package oauth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
)

// challenge401 is a 401 answer carrying header as WWW-Authenticate.
func challenge401(header string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", nil)
	h := http.Header{}
	if header != "" {
		h.Set("WWW-Authenticate", header)
	}
	return &http.Response{StatusCode: 401, Header: h, Request: req}
}

// TestNoRedirects: a metadata URL that redirects is not followed.
func TestNoRedirects(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/target" {
			hits.Add(1)
			writeJSON(w, 200, map[string]any{"resource": "http://127.0.0.1:9/mcp", "authorization_servers": []string{"http://127.0.0.1:9"}})
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

// TestConcurrentChallenges: challenges that race for one token run one
// authorization; the others just retry with it.
func TestConcurrentChallenges(t *testing.T) {
	as := newAS(t, asOptions{})
	rs := newRS(t, as, core.ModeAuto)
	src := oauth.New(codeConfig())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			resp := challenge401(`Bearer resource_metadata="` + rs.srv.URL + `/.well-known/oauth-protected-resource/mcp"`)
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
	if auth, tok, reg := as.snapshot(); len(auth) != 1 || len(tok) != 1 || len(reg) != 1 {
		t.Fatalf("authorizations %d, token requests %d, registrations %d; want 1 each", len(auth), len(tok), len(reg))
	}
}

// TestScopeFlood: a challenge naming a flood of scopes is refused before
// anything is fetched, instead of costing quadratic time in the scope
// bookkeeping.
func TestScopeFlood(t *testing.T) {
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
	as := newAS(t, asOptions{})
	rs := newRS(t, as, core.ModeAuto)
	src := oauth.New(codeConfig())
	resp := challenge401(`Bearer resource_metadata="` + rs.srv.URL + `/.well-known/oauth-protected-resource/mcp", scope="` + b.String() + `"`)
	err := src.Challenge(t.Context(), rs.url, resp)
	if !errors.Is(err, oauth.ErrTooManyScopes) {
		t.Fatalf("err %v, want ErrTooManyScopes", err)
	}
	if auth, _, _ := as.snapshot(); len(auth) != 0 {
		t.Fatal("authorization requested")
	}
}

// BenchmarkToken: the per-request cost of a Source with a valid token,
// beside client.StaticToken.
func BenchmarkToken(b *testing.B) {
	as := newAS(&testing.T{}, asOptions{})
	defer as.srv.Close()
	b.Run("static", func(b *testing.B) {
		ts := client.StaticToken("x")
		b.ReportAllocs()
		for b.Loop() {
			ts.Token(b.Context())
		}
	})
	b.Run("oauth", func(b *testing.B) {
		rs := newRS(&testing.T{}, as, core.ModeAuto)
		defer rs.srv.Close()
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
