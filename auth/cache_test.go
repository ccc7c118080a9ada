package auth

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// The token caches are invisible on the wire but for their bounds, so their
// bounds are checked here, inside the package: Options.JWTCacheSize and
// Introspection.CacheSize reach the caches, and a flood of distinct tokens
// keeps each within its bound while the newest entry stays cached. The
// end-to-end behaviour (answers, expiry, introspection counts against a
// real authorization server, package authtest) is tested by package
// auth_test (introspect_test.go, negcache_test.go, auth_test.go).

// fill puts n distinct entries into tc and returns the key of the last.
func fill(tc *tokenCache, n int, now time.Time) [32]byte {
	var key [32]byte
	for i := range n {
		key = sha256.Sum256(fmt.Appendf(nil, "token-%d", i))
		tc.put(key, &claims{sub: fmt.Sprint(i)}, now.Add(time.Hour), now)
	}
	return key
}

// TestJWTCacheBound: Options.JWTCacheSize = 4 bounds the verified-JWT cache
// at 4 entries after 20 distinct tokens, and the cache is in use.
func TestJWTCacheBound(t *testing.T) {
	t.Parallel()
	rs, err := New(&Options{Resource: "https://mcp.example.com/mcp",
		Issuers: []Issuer{{Issuer: "https://auth.example.com"}}, JWTCacheSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	last := fill(&rs.jwtCache, 20, now)
	if n := rs.jwtCache.len(); n > 4 || n == 0 {
		t.Fatalf("cache holds %d, bound 4", n)
	}
	if rs.jwtCache.get(last, now) == nil {
		t.Fatal("the newest verified JWT is not cached")
	}
}

// TestIntrospectionCacheBound: Introspection.CacheSize = 8 bounds the
// cached introspection answers at 8 after 50 distinct tokens.
func TestIntrospectionCacheBound(t *testing.T) {
	t.Parallel()
	rs, err := New(&Options{Resource: "https://mcp.example.com/mcp", Issuers: []Issuer{{
		Issuer: "https://auth.example.com", Introspection: &Introspection{
			Endpoint: "https://auth.example.com/introspect", ClientID: "rs", ClientSecret: "secret", CacheSize: 8}}}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.introspector == nil || rs.introspector.intro == nil {
		t.Fatal("no introspecting issuer")
	}
	now := time.Now()
	c := &rs.introspector.intro.cache
	last := fill(c, 50, now)
	if n := c.len(); n > 8 || n == 0 {
		t.Fatalf("cache holds %d entries, bound 8", n)
	}
	if c.get(last, now) == nil {
		t.Fatal("the newest introspection answer is not cached")
	}
}
