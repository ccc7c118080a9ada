package auth_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// twoIssuers: jwtAS's tokens are verified as JWTs, introAS's introspected.
func twoIssuers(t *testing.T, cacheTTL time.Duration) (*env, *authtest.Server) {
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true})
	t.Cleanup(introAS.Close)
	return withIntrospection(t, cacheTTL, introAS, envConfig{}), introAS
}

// withIntrospection is the env of cfg trusting introAS by introspection
// too.
func withIntrospection(t *testing.T, cacheTTL time.Duration, introAS *authtest.Server, cfg envConfig) *env {
	cfg.opts = func(o *auth.Options, as *authtest.Server, res string) {
		o.Issuers = append(o.Issuers, auth.Issuer{
			Issuer: introAS.Issuer,
			Introspection: &auth.Introspection{
				Endpoint:     introAS.Issuer + "/introspect",
				ClientID:     introAS.IntrospectionClientID,
				ClientSecret: introAS.IntrospectionSecret,
				CacheTTL:     cacheTTL,
			},
		})
	}
	return newEnv(t, cfg)
}

func TestIntrospection(t *testing.T) {
	t.Parallel()
	e, introAS := twoIssuers(t, 0)
	ok := want{status: 200, text: "hello user-1 via client-1"}
	invalid := want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest}
	aud := []string{e.resource}

	opaque := introAS.Opaque(authtest.Claims{Audience: aud, Scope: "mcp"})
	check(t, e, e.do(t, opaque, call("echo")), ok)
	if n := introAS.Introspections(); n != 1 {
		t.Fatalf("%d introspections, want 1", n)
	}
	// Cached: no second call.
	check(t, e, e.do(t, opaque, call("echo")), ok)
	if n := introAS.Introspections(); n != 1 {
		t.Fatalf("%d introspections with a warm cache, want 1", n)
	}
	// A JWT of the JWT issuer is never introspected.
	check(t, e, e.do(t, e.token("mcp"), call("echo")), ok)
	// A JWT naming the introspecting issuer is introspected.
	introJWT := introAS.Mint(authtest.Claims{Audience: aud, Scope: "mcp"})
	check(t, e, e.do(t, introJWT, call("echo")), ok)
	if n := introAS.Introspections(); n != 2 {
		t.Fatalf("%d introspections, want 2", n)
	}
	// Inactive, wrong audience, missing scope, write scope.
	check(t, e, e.do(t, "opaque-unknown", call("echo")), invalid)
	check(t, e, e.do(t, introAS.Opaque(authtest.Claims{Audience: []string{"https://other.example"}, Scope: "mcp"}), call("echo")), invalid)
	check(t, e, e.do(t, introAS.Opaque(authtest.Claims{Audience: aud, Scope: "mcp", NoExpiry: true}), call("echo")), invalid)
	check(t, e, e.do(t, introAS.Opaque(authtest.Claims{Audience: aud, Scope: "other"}), call("echo")),
		want{status: 403, error: "insufficient_scope", scope: "mcp", code: core.CodeInvalidRequest})
	check(t, e, e.do(t, introAS.Opaque(authtest.Claims{Audience: aud, Scope: "mcp files:write"}), call("write")), want{status: 200, text: "written"})

	// An outage is 503 with Retry-After, never invalid_token.
	introAS.SetIntrospectionDown(true)
	r := e.do(t, introAS.Opaque(authtest.Claims{Audience: aud, Scope: "mcp"}), call("echo"))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("outage: %d %v %s", r.status, r.header, r.body)
	}
	// Cached answers keep serving during the outage.
	check(t, e, e.do(t, opaque, call("echo")), ok)
	introAS.SetIntrospectionDown(false)
}

// TestIntrospectionCacheBoundedByExp: an answer is never reused beyond the
// token's exp, even when the cache TTL is longer.
func TestIntrospectionCacheBoundedByExp(t *testing.T) {
	t.Parallel()
	jwtAS, introAS := authtest.New(nil), authtest.New(&authtest.Options{OpaqueTokens: true})
	t.Cleanup(jwtAS.Close)
	t.Cleanup(introAS.Close)
	inBubble(t, []*authtest.Server{jwtAS, introAS}, func(t *testing.T, n *mcptest.Network) {
		e := withIntrospection(t, time.Hour, introAS, envConfig{as: jwtAS, net: n})
		tok := introAS.Opaque(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp", Expiry: time.Now().Add(2 * time.Minute)})
		check(t, e, e.do(t, tok, call("echo")), want{status: 200, text: "hello user-1 via client-1"})
		time.Sleep(2*time.Minute + auth.DefaultLeeway + time.Second)
		check(t, e, e.do(t, tok, call("echo")), want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest})
		if n := introAS.Introspections(); n != 2 {
			t.Fatalf("%d introspections, want 2 (the cached answer expired with the token)", n)
		}
	})
}

// TestIntrospectionCacheSize: many distinct tokens keep the cache within its
// bound (one hostile caller cannot grow memory without limit).
func TestIntrospectionCacheSize(t *testing.T) {
	t.Parallel()
	introAS := authtest.New(&authtest.Options{OpaqueTokens: true})
	t.Cleanup(introAS.Close)
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.Issuers = []auth.Issuer{{Issuer: introAS.Issuer, Introspection: &auth.Introspection{
			Endpoint: introAS.Issuer + "/introspect", ClientID: introAS.IntrospectionClientID,
			ClientSecret: introAS.IntrospectionSecret, CacheSize: 8}}}
		o.HTTPClient = introAS.Client()
	}})
	toks := make([]string, 50)
	for i := range toks {
		toks[i] = introAS.Opaque(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"})
		e.do(t, toks[i], call("echo"))
	}
	// Presented again, a token is answered from the cache only if the cache
	// still holds it, and a miss caches a token that is not asked for again:
	// at most 8 of the 50 replays are hits, at least 42 introspect. (Package
	// auth's TestIntrospectionCacheBound checks the bound on the cache.)
	before := introAS.Introspections()
	for _, tok := range toks {
		e.do(t, tok, call("echo"))
	}
	if n := introAS.Introspections() - before; n < 42 {
		t.Fatalf("replaying 50 tokens took %d introspections: the cache held more than its bound 8", n)
	}
}
