package auth_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

func retryAfter(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.HTTPHeader().Get("Retry-After")
	}
	return ""
}

// TestIntrospectionNegativeCache: an inactive answer is remembered by the
// token's digest for DefaultIntrospectionNegativeCacheTTL: 300 requests with
// one unknown token cost one introspection, 300 distinct unknown tokens one
// each, and the same 300 again none until the period ends.
func TestIntrospectionNegativeCache(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		for i := 0; i < 300; i++ {
			if st, _ := authn(t.Context(), rs, "opaque-unknown"); st != http.StatusUnauthorized {
				t.Fatalf("unknown token: %d, want 401", st)
			}
		}
		if n := as.Introspections(); n != 1 {
			t.Fatalf("300 requests with one unknown token: %d introspections, want 1", n)
		}
		var distinct []string
		for i := 0; i < 300; i++ {
			distinct = append(distinct, fmt.Sprintf("opaque-unknown-%d", i))
		}
		for pass := 0; pass < 2; pass++ {
			for _, tok := range distinct {
				if st, _ := authn(t.Context(), rs, tok); st != http.StatusUnauthorized {
					t.Fatalf("unknown token: %d, want 401", st)
				}
			}
			if n := as.Introspections(); n != 301 {
				t.Fatalf("pass %d over 300 distinct unknown tokens: %d introspections in all, want 301", pass, n)
			}
		}
		// A valid token is not affected by the others' answers.
		if st, err := authn(t.Context(), rs, bubbleOpaque(as, authtest.Claims{})); st != http.StatusOK {
			t.Fatalf("valid token: %d %v", st, err)
		}
		// The period ends: one more introspection.
		time.Sleep(auth.DefaultIntrospectionNegativeCacheTTL - time.Nanosecond)
		authn(t.Context(), rs, "opaque-unknown")
		if n := as.Introspections(); n != 302 {
			t.Fatalf("before the period ends: %d introspections, want 302", n)
		}
		time.Sleep(time.Nanosecond)
		authn(t.Context(), rs, "opaque-unknown")
		if n := as.Introspections(); n != 303 {
			t.Fatalf("after the period: %d introspections, want 303", n)
		}
	})
}

// TestIntrospectionSingleFlight: concurrent requests with one token share
// one introspection, inactive or active.
func TestIntrospectionSingleFlight(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		for _, c := range []struct {
			tok  string
			want int
		}{{"opaque-unknown", http.StatusUnauthorized}, {bubbleOpaque(as, authtest.Claims{}), http.StatusOK}} {
			before := as.Introspections()
			h := as.Hold(authtest.EndpointIntrospection)
			defer h.Release()
			results := make(chan int, 50)
			for i := 0; i < 50; i++ {
				go func() {
					st, _ := authn(t.Context(), rs, c.tok)
					results <- st
				}()
			}
			<-h.Arrived()
			synctest.Wait() // every request waits: one at the server, the others for its answer
			h.Release()
			for i := 0; i < 50; i++ {
				if st := <-results; st != c.want {
					t.Fatalf("status %d, want %d", st, c.want)
				}
			}
			if n := as.Introspections() - before; n != 1 || h.Served() != 1 {
				t.Fatalf("50 concurrent requests with one token: %d introspections (%d held), want 1", n, h.Served())
			}
		}
	})
}

// TestIntrospectionConcurrencyBound: at most
// DefaultIntrospectionConcurrency introspections run at once; a request that
// needs one more is answered at once with 503 and Retry-After, while a
// request for a token already being introspected waits for that answer.
func TestIntrospectionConcurrencyBound(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		h := as.Hold(authtest.EndpointIntrospection)
		defer h.Release()
		const k = auth.DefaultIntrospectionConcurrency
		results := make(chan int, k+1)
		for i := 0; i < k; i++ {
			go func() {
				st, _ := authn(t.Context(), rs, fmt.Sprintf("opaque-held-%d", i))
				results <- st
			}()
		}
		for i := 0; i < k; i++ {
			<-h.Arrived()
		}
		start := time.Now()
		st, err := authn(t.Context(), rs, "opaque-one-too-many")
		if st != http.StatusServiceUnavailable || retryAfter(err) == "" || time.Since(start) != 0 {
			t.Fatalf("beyond the bound: %d (Retry-After %q) after %v; want 503 with Retry-After at once", st, retryAfter(err), time.Since(start))
		}
		go func() {
			st, _ := authn(t.Context(), rs, "opaque-held-0")
			results <- st
		}()
		synctest.Wait()
		if len(results) != 0 {
			t.Fatalf("a request for a token in flight did not wait for its answer")
		}
		h.Release()
		for i := 0; i < k+1; i++ {
			if st := <-results; st != http.StatusUnauthorized {
				t.Fatalf("held unknown token: %d, want 401", st)
			}
		}
		if n := as.Introspections(); n != k {
			t.Fatalf("%d introspections, want %d", n, k)
		}
		if st, err := authn(t.Context(), rs, bubbleOpaque(as, authtest.Claims{})); st != http.StatusOK {
			t.Fatalf("after the burst: %d %v", st, err)
		}
	})
}

// TestIntrospectionOutageIsNotInactive: an outage answer (503) is never
// remembered: neither as inactive nor at all, for valid and unknown tokens.
func TestIntrospectionOutageIsNotInactive(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		valid := bubbleOpaque(as, authtest.Claims{})
		as.SetIntrospectionDown(true)
		for _, tok := range []string{valid, "opaque-unknown"} {
			if st, err := authn(t.Context(), rs, tok); st != http.StatusServiceUnavailable || retryAfter(err) == "" {
				t.Fatalf("outage: %d %v", st, err)
			}
		}
		as.SetIntrospectionDown(false)
		if st, err := authn(t.Context(), rs, valid); st != http.StatusOK {
			t.Fatalf("valid token after the outage: %d %v", st, err)
		}
		if st, _ := authn(t.Context(), rs, "opaque-unknown"); st != http.StatusUnauthorized {
			t.Fatalf("unknown token after the outage: %d", st)
		}
		if n := as.Introspections(); n != 4 {
			t.Fatalf("%d introspections, want 4", n)
		}
	})
}

// TestIntrospectionTokenType: an active answer whose token_type (or
// token_use) says the token is not an access token is refused, and
// remembered as inactive (RFC 7662 §2.2; RFC 6749 §5.1: token types are
// case-insensitive).
func TestIntrospectionTokenType(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		cases := []struct {
			extra map[string]any
			want  int
		}{
			{map[string]any{"token_type": "Bearer"}, http.StatusOK},
			{map[string]any{"token_type": "bearer"}, http.StatusOK},
			{map[string]any{"token_type": nil}, http.StatusOK},
			{map[string]any{"token_type": "access_token"}, http.StatusOK},
			{map[string]any{"token_type": "refresh_token"}, http.StatusUnauthorized},
			{map[string]any{"token_type": "N_A"}, http.StatusUnauthorized},
			{map[string]any{"token_type": "DPoP"}, http.StatusUnauthorized},
			{map[string]any{"token_type": "DPoP", "cnf": map[string]any{"x5t#S256": "x"}}, http.StatusUnauthorized},
			// Bound to a key (RFC 9449 §6.2) but presented as Bearer: the
			// downgrade is refused (TestDPoPIntrospectedToken: with its
			// proof, it passes).
			{map[string]any{"token_type": "DPoP", "cnf": map[string]any{"jkt": "x"}}, http.StatusUnauthorized},
			{map[string]any{"token_type": "id_token"}, http.StatusUnauthorized},
			{map[string]any{"token_type": 1}, http.StatusUnauthorized},
			{map[string]any{"token_use": "refresh_token"}, http.StatusUnauthorized},
			{map[string]any{"token_use": "access_token"}, http.StatusOK},
		}
		for _, c := range cases {
			tok := bubbleOpaque(as, authtest.Claims{Extra: c.extra})
			if st, err := authn(t.Context(), rs, tok); st != c.want {
				t.Fatalf("%v: %d %v, want %d", c.extra, st, err, c.want)
			}
		}
		// A refresh token presented as an access token, twice: one
		// introspection.
		rt := as.RefreshToken(authtest.Claims{Audience: []string{bubbleResource}, Scope: "mcp"})
		before := as.Introspections()
		for i := 0; i < 2; i++ {
			if st, _ := authn(t.Context(), rs, rt); st != http.StatusUnauthorized {
				t.Fatalf("refresh token as access token: %d, want 401", st)
			}
		}
		if n := as.Introspections() - before; n != 1 {
			t.Fatalf("%d introspections of the refresh token, want 1", n)
		}
	})
}

// TestIntrospectionFloodKeepsValidAnswers: unknown tokens beyond the cache
// bound do not evict the answers of valid tokens.
func TestIntrospectionFloodKeepsValidAnswers(t *testing.T) {
	t.Parallel()
	introspectionBubble(t, auth.Introspection{CacheSize: 8}, func(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource) {
		valid := bubbleOpaque(as, authtest.Claims{})
		authn(t.Context(), rs, valid)
		for i := 0; i < 100; i++ {
			authn(t.Context(), rs, fmt.Sprintf("opaque-flood-%d", i))
		}
		before := as.Introspections()
		if st, err := authn(t.Context(), rs, valid); st != http.StatusOK || as.Introspections() != before {
			t.Fatalf("valid token after a flood: %d %v, %d new introspections", st, err, as.Introspections()-before)
		}
	})
}
