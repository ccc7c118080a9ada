package authfield_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
)

// TestAbortedRequestThenValidToken: a client sends a JWT with the
// configured iss and goes away while the first JWKS fetch is in flight; a
// valid token right after gets 200, and the authorization server served
// the one JWKS request.
func TestAbortedRequestThenValidToken(t *testing.T) {
	t.Parallel()
	as, n, aud := jwtNotes(t)
	h := as.Hold(authtest.EndpointJWKS)
	defer h.Release()
	n.abort(t, as.Mint(authtest.Claims{Audience: aud, Scope: "notes:read"}), h.Arrived())
	h.Release()
	<-h.Left()
	res := n.tool(t, as.Mint(authtest.Claims{Audience: aud, Scope: "notes:read"}), "list_notes", nil)
	if res.Status != http.StatusOK || res.Error != nil {
		t.Fatalf("a valid token after an aborted request: %d %v %s", res.Status, res.Error, challenge(res))
	}
	if h.Served() != 1 || h.Abandoned() != 0 || as.JWKSFetches() != 1 {
		t.Fatalf("JWKS requests: served %d, abandoned %d, in all %d; want the one, served", h.Served(), h.Abandoned(), as.JWKSFetches())
	}
}

// TestScopeSeparators: a scope string joined by a tab, newline, vertical
// tab, U+00A0 or U+3000 grants nothing (RFC 6749 §3.3: U+0020 separates),
// from a JWT and from introspection.
func TestScopeSeparators(t *testing.T) {
	t.Parallel()
	jwtAS := authtest.New(nil)
	defer jwtAS.Close()
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true, IssuerPath: "/idp"})
	defer introAS.Close()
	n := startNotes(t, []string{"MCPFN_INTROSPECTION_SECRET=" + introAS.IntrospectionSecret}, "-jwt-issuer", jwtAS.Issuer,
		"-introspection-issuer", introAS.Issuer, "-introspection-endpoint", introAS.Issuer+"/introspect",
		"-introspection-client-id", introAS.IntrospectionClientID)
	aud := []string{n.endpoint}
	mint := map[string]func(string) string{
		"jwt":           func(s string) string { return jwtAS.Mint(authtest.Claims{Audience: aud, Scope: s}) },
		"introspection": func(s string) string { return introAS.Opaque(authtest.Claims{Audience: aud, Scope: s}) },
	}
	for kind, m := range mint {
		if res := n.tool(t, m("notes:read notes:write"), "write_note", map[string]any{"text": "x"}); res.Status != 200 || res.Error != nil {
			t.Fatalf("%s: space-separated scopes: %d %v", kind, res.Status, res.Error)
		}
		for _, sep := range []string{"\t", "\n", "\v", "\u00a0", "\u3000"} {
			tok := m("notes:read" + sep + "notes:write")
			for _, tool := range []string{"write_note", "list_notes"} {
				args := map[string]any{}
				if tool == "write_note" {
					args["text"] = "x"
				}
				res := n.tool(t, tok, tool, args)
				if res.Status != http.StatusForbidden || !strings.Contains(challenge(res), `error="insufficient_scope"`) {
					t.Fatalf("%s: %s with scopes joined by %q: %d %s", kind, tool, sep, res.Status, challenge(res))
				}
			}
		}
	}
}

// TestCompletionNeedsPromptScopes: completion/complete of draft_note's
// argument needs draft_note's scope, as prompts/get does.
func TestCompletionNeedsPromptScopes(t *testing.T) {
	t.Parallel()
	as, n, aud := jwtNotes(t)
	writer := as.Mint(authtest.Claims{Audience: aud, Scope: "notes:read notes:write", Subject: "alice"})
	reader := as.Mint(authtest.Claims{Audience: aud, Scope: "notes:read", Subject: "alice"})
	if res := n.tool(t, writer, "write_note", map[string]any{"text": "launch plan"}); res.Error != nil {
		t.Fatal(res.Error)
	}
	complete := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "draft_note"},
		"argument": map[string]any{"name": "topic", "value": "la"}}
	get := map[string]any{"name": "draft_note", "arguments": map[string]any{"topic": "launch"}}
	for method, params := range map[string]map[string]any{"prompts/get": get, "completion/complete": complete} {
		res := n.call(t, reader, method, params)
		if res.Status != http.StatusForbidden || !strings.Contains(challenge(res), `scope="notes:read notes:write"`) {
			t.Fatalf("%s with notes:read: %d %s %s", method, res.Status, challenge(res), res.Result)
		}
	}
	res := n.call(t, writer, "completion/complete", complete)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Result), "launch plan") {
		t.Fatalf("completion with notes:write: %d %s %v", res.Status, res.Result, res.Error)
	}
}

// TestUnknownOpaqueTokens: unknown opaque tokens, one repeated and 300
// distinct, sent 300 at a time by concurrent clients, cost at most one
// introspection per token per negative-cache period, counted at the
// authorization server; a refresh token presented as an access token is
// refused; a burst beyond the concurrency bound gets 503 with Retry-After.
func TestUnknownOpaqueTokens(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{OpaqueTokens: true})
	defer as.Close()
	n := startNotes(t, []string{"MCPFN_INTROSPECTION_SECRET=" + as.IntrospectionSecret},
		"-introspection-issuer", as.Issuer, "-introspection-endpoint", as.Issuer+"/introspect", "-introspection-client-id", as.IntrospectionClientID)
	send := func(toks []string) {
		var wg sync.WaitGroup
		var bad atomic.Value
		next := make(chan string)
		for w := 0; w < 8; w++ {
			wg.Go(func() {
				for tok := range next {
					res, err := n.try(tok, "tools/call", map[string]any{"name": "list_notes", "arguments": map[string]any{}})
					if err != nil {
						bad.Store(err.Error())
					} else if res.Status != http.StatusUnauthorized {
						bad.Store(fmt.Sprintf("unknown token: %d %s", res.Status, challenge(res)))
					}
				}
			})
		}
		for _, tok := range toks {
			next <- tok
		}
		close(next)
		wg.Wait()
		if b := bad.Load(); b != nil {
			t.Fatal(b)
		}
	}
	start := time.Now()
	same := make([]string, 300)
	for i := range same {
		same[i] = "opaque-unknown-repeated"
	}
	send(same)
	distinct := make([]string, 300)
	for i := range distinct {
		distinct[i] = fmt.Sprintf("opaque-unknown-%03d", i)
	}
	send(distinct)
	send(distinct)
	periods := int64(time.Since(start)/auth.DefaultIntrospectionNegativeCacheTTL) + 1
	for _, tok := range append(distinct, same[0]) {
		if c := as.IntrospectionsOf(tok); c < 1 || c > periods {
			t.Fatalf("token %s introspected %d times in %v (%d negative-cache periods)", tok, c, time.Since(start), periods)
		}
	}
	if total := as.Introspections(); periods == 1 && total != 301 {
		t.Fatalf("%d introspections for 900 requests with 301 unknown tokens, want 301", total)
	}

	rt := as.RefreshToken(authtest.Claims{Audience: []string{n.endpoint}, Scope: "notes:read"})
	if res := n.tool(t, rt, "list_notes", nil); res.Status != http.StatusUnauthorized || !strings.Contains(challenge(res), "invalid_token") {
		t.Fatalf("a refresh token as an access token: %d %s", res.Status, challenge(res))
	}

	// The concurrency bound: while the authorization server holds
	// DefaultIntrospectionConcurrency introspections, one more token gets
	// 503 with Retry-After, without an introspection.
	h := as.Hold(authtest.EndpointIntrospection)
	defer h.Release()
	var wg sync.WaitGroup
	for i := 0; i < auth.DefaultIntrospectionConcurrency; i++ {
		tok := fmt.Sprintf("opaque-held-%d", i)
		wg.Go(func() { n.try(tok, "tools/call", map[string]any{"name": "list_notes", "arguments": map[string]any{}}) })
		<-h.Arrived()
	}
	res := n.tool(t, "opaque-one-too-many", "list_notes", nil)
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || as.IntrospectionsOf("opaque-one-too-many") != 0 {
		t.Fatalf("beyond the bound: %d, Retry-After %q", res.Status, res.Header.Get("Retry-After"))
	}
	h.Release()
	wg.Wait()
}

// TestDiscoveredEndpoints: a jwks_uri over plain http on a remote host,
// named by issuer metadata, is not fetched; a 307 from the metadata, JWKS
// or introspection endpoint is not followed (the introspection form would
// go elsewhere), and the log says so.
func TestDiscoveredEndpoints(t *testing.T) {
	t.Parallel()
	t.Run("http jwks_uri", func(t *testing.T) {
		t.Parallel()
		as := authtest.New(&authtest.Options{JWKSURI: "http://keys.example.test/jwks"})
		defer as.Close()
		// The process reaches non-loopback hosts through this proxy
		// (HTTP_PROXY), which serves the issuer's keys: a resource that
		// fetched the jwks_uri would get them.
		var proxied atomic.Int64
		u, _ := url.Parse(as.URL)
		rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }}
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxied.Add(1)
			rp.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		n := startNotes(t, []string{"HTTP_PROXY=" + proxy.URL, "http_proxy=" + proxy.URL, "NO_PROXY=", "no_proxy="}, "-jwt-issuer", as.Issuer)
		res := n.tool(t, as.Mint(authtest.Claims{Audience: []string{n.endpoint}, Scope: "notes:read"}), "list_notes", nil)
		if res.Status != http.StatusServiceUnavailable || proxied.Load() != 0 || as.JWKSFetches() != 0 {
			t.Fatalf("jwks_uri over http on a remote host: status %d, %d proxied requests, %d JWKS fetches; want 503, none, none",
				res.Status, proxied.Load(), as.JWKSFetches())
		}
		if !waitLog(n.log, `jwks_uri \"http://keys.example.test/jwks\" refused`) {
			t.Fatalf("the log does not name the refused jwks_uri:\n%s", n.log.String())
		}
	})
	for _, ep := range []authtest.Endpoint{authtest.EndpointMetadata, authtest.EndpointJWKS, authtest.EndpointIntrospection} {
		t.Run("307 from "+string(ep), func(t *testing.T) {
			t.Parallel()
			opaque := ep == authtest.EndpointIntrospection
			as := authtest.New(&authtest.Options{OpaqueTokens: opaque})
			defer as.Close()
			flags := []string{"-jwt-issuer", as.Issuer}
			if opaque {
				flags = []string{"-introspection-issuer", as.Issuer, "-introspection-endpoint", as.Issuer + "/introspect",
					"-introspection-client-id", as.IntrospectionClientID}
			}
			n := startNotes(t, []string{"MCPFN_INTROSPECTION_SECRET=" + as.IntrospectionSecret}, flags...)
			as.SetRedirect(ep, true)
			c := authtest.Claims{Audience: []string{n.endpoint}, Scope: "notes:read"}
			tok := as.Mint(c)
			if opaque {
				tok = as.Opaque(c)
			}
			res := n.tool(t, tok, "list_notes", nil)
			if res.Status != http.StatusServiceUnavailable || as.Moved() != 0 {
				t.Fatalf("307 from %s: status %d, %d requests followed it; want 503 and none", ep, res.Status, as.Moved())
			}
			if !waitLog(n.log, "not followed") {
				t.Fatalf("the log does not say a redirect was refused:\n%s", n.log.String())
			}
		})
	}
}
