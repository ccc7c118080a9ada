package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// abortDuringFetch sends tok with a context that is cancelled while the
// JWKS fetch it causes is held at the authorization server, and returns
// once that caller has given up and the bubble is quiet again. Then it
// releases the fetch.
func abortDuringFetch(t *testing.T, as *authtest.Server, rs *auth.ProtectedResource, tok string) *authtest.Hold {
	t.Helper()
	h := as.Hold(authtest.EndpointJWKS)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		st, _ := authn(ctx, rs, tok)
		done <- st
	}()
	<-h.Arrived()
	cancel()
	if st := <-done; st != http.StatusServiceUnavailable {
		t.Fatalf("the aborted caller got %d, want 503", st)
	}
	synctest.Wait() // whatever the abort causes at the authorization server has happened
	h.Release()
	synctest.Wait()
	return h
}

// TestJWKSFetchSurvivesAbortedCaller: a caller that goes away while the
// first JWKS fetch is in flight does not cancel it; the next token verifies
// at once, without another fetch.
func TestJWKSFetchSurvivesAbortedCaller(t *testing.T) {
	t.Parallel()
	asBubble(t, nil, func(t *testing.T, as *authtest.Server) {
		rs := bubbleResourceFor(t, as, auth.Options{})
		h := abortDuringFetch(t, as, rs, bubbleToken(as, "mcp"))
		start := time.Now()
		if st, err := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusOK {
			t.Fatalf("a valid token after an aborted fetch: %d %v", st, err)
		}
		if time.Since(start) != 0 {
			t.Fatalf("the valid token waited %v", time.Since(start))
		}
		if h.Served() != 1 || h.Abandoned() != 0 || as.JWKSFetches() != 1 {
			t.Fatalf("JWKS requests: served %d, abandoned %d, fetches %d; want the one fetch served", h.Served(), h.Abandoned(), as.JWKSFetches())
		}
	})
}

// TestJWKSRefetchSurvivesAbortedCaller: after a key rotation, a caller that
// goes away during the unknown-kid refetch does not make the new kid
// unknown for JWKSMinInterval.
func TestJWKSRefetchSurvivesAbortedCaller(t *testing.T) {
	t.Parallel()
	asBubble(t, nil, func(t *testing.T, as *authtest.Server) {
		rs := bubbleResourceFor(t, as, auth.Options{})
		if st, err := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusOK {
			t.Fatalf("first token: %d %v", st, err)
		}
		as.Rotate()
		time.Sleep(auth.DefaultJWKSMinInterval) // the refetch is due
		h := abortDuringFetch(t, as, rs, bubbleToken(as, "mcp"))
		if st, err := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusOK {
			t.Fatalf("a token of the new key after an aborted refetch: %d %v", st, err)
		}
		if h.Served() != 1 || as.JWKSFetches() != 2 {
			t.Fatalf("JWKS: refetch served %d, fetches %d, want 1 and 2", h.Served(), as.JWKSFetches())
		}
	})
}

// TestJWKSColdRetry: while no JWKS was ever fetched, a failed fetch is
// retried after a second, not after JWKSMinInterval; a flood meanwhile
// costs no fetch.
func TestJWKSColdRetry(t *testing.T) {
	t.Parallel()
	asBubble(t, nil, func(t *testing.T, as *authtest.Server) {
		rs := bubbleResourceFor(t, as, auth.Options{Issuers: []auth.Issuer{{Issuer: as.Issuer, JWKSURL: as.Issuer + "/jwks"}}})
		as.SetJWKSDown(true)
		if st, _ := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusServiceUnavailable {
			t.Fatalf("JWKS down: %d, want 503", st)
		}
		as.SetJWKSDown(false)
		for i := 0; i < 50; i++ {
			if st, _ := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusServiceUnavailable {
				t.Fatalf("retry within a second: %d, want 503", st)
			}
		}
		if n := as.JWKSFetches(); n != 1 {
			t.Fatalf("%d JWKS fetches within a second of a failure, want 1", n)
		}
		time.Sleep(time.Second)
		if st, err := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusOK {
			t.Fatalf("a second after the failure: %d %v", st, err)
		}
		// With keys in hand, failures back off by JWKSMinInterval: an
		// unknown kid during an outage is refetched once per interval.
		as.SetJWKSDown(true)
		as.Rotate()
		time.Sleep(auth.DefaultJWKSMinInterval)
		for i := 0; i < 3; i++ {
			authn(t.Context(), rs, bubbleToken(as, "mcp"))
			time.Sleep(time.Second)
		}
		if n := as.JWKSFetches(); n != 3 {
			t.Fatalf("%d JWKS fetches, want 3 (one refetch in the interval)", n)
		}
	})
}

// TestJWKSFetchTimeout: a JWKS endpoint that never answers costs a caller
// DefaultFetchTimeout, then 503.
func TestJWKSFetchTimeout(t *testing.T) {
	t.Parallel()
	asBubble(t, nil, func(t *testing.T, as *authtest.Server) {
		rs := bubbleResourceFor(t, as, auth.Options{})
		h := as.Hold(authtest.EndpointJWKS)
		defer h.Release()
		start := time.Now()
		if st, _ := authn(t.Context(), rs, bubbleToken(as, "mcp")); st != http.StatusServiceUnavailable {
			t.Fatalf("hung JWKS: %d, want 503", st)
		}
		if d := time.Since(start); d != auth.DefaultFetchTimeout {
			t.Fatalf("hung JWKS answered after %v, want %v", d, auth.DefaultFetchTimeout)
		}
	})
}

// TestDiscoveredJWKSURI: a jwks_uri read from issuer metadata passes the
// check a configured JWKSURL does: https, or http on loopback, and plain
// http only when the issuer itself is a plain-http loopback URL.
func TestDiscoveredJWKSURI(t *testing.T) {
	t.Parallel()
	t.Run("http on a remote host", func(t *testing.T) {
		t.Parallel()
		as := authtest.New(&authtest.Options{JWKSURI: "http://keys.example.test/jwks"})
		t.Cleanup(as.Close)
		// Every connection reaches the authorization server, so that a
		// resource that followed the jwks_uri would get its keys.
		tr := as.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse(as.URL) }
		e := newEnv(t, envConfig{as: as, opts: func(o *auth.Options, _ *authtest.Server, _ string) {
			o.HTTPClient = &http.Client{Transport: tr}
		}})
		r := e.do(t, e.token("mcp"), call("echo"))
		if r.status != http.StatusServiceUnavailable || as.JWKSFetches() != 0 {
			t.Fatalf("jwks_uri over http on a remote host: status %d, %d JWKS fetches; want 503 and none", r.status, as.JWKSFetches())
		}
	})
	t.Run("http loopback from an https issuer", func(t *testing.T) {
		t.Parallel()
		// The https issuer's JWKS, also served over plain http on loopback
		// (a proxy), as a resource that followed the jwks_uri would get it.
		var issuer atomic.Pointer[authtest.Server]
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			as := issuer.Load()
			u, _ := url.Parse(as.URL)
			(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: as.Client().Transport}).ServeHTTP(w, r)
		}))
		t.Cleanup(plain.Close)
		as := authtest.New(&authtest.Options{TLS: true, JWKSURI: plain.URL + "/jwks"})
		t.Cleanup(as.Close)
		issuer.Store(as)
		e := newEnv(t, envConfig{as: as})
		r := e.do(t, e.token("mcp"), call("echo"))
		if r.status != http.StatusServiceUnavailable || as.JWKSFetches() != 0 {
			t.Fatalf("https issuer naming an http loopback jwks_uri: status %d, %d JWKS fetches; want 503 and none", r.status, as.JWKSFetches())
		}
	})
	t.Run("https", func(t *testing.T) {
		t.Parallel()
		as := authtest.New(&authtest.Options{TLS: true})
		t.Cleanup(as.Close)
		e := newEnv(t, envConfig{as: as})
		check(t, e, e.do(t, e.token("mcp"), call("echo")), want{status: 200, text: "hello user-1 via client-1"})
	})
}

// TestNoRedirects: metadata, JWKS and introspection requests follow no
// redirect (a 307 would re-POST the token form elsewhere), with the
// default HTTP client and with one given in Options.HTTPClient.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	for _, ep := range []authtest.Endpoint{authtest.EndpointMetadata, authtest.EndpointJWKS, authtest.EndpointIntrospection} {
		for _, own := range []bool{false, true} {
			name := string(ep)
			if own {
				name += "/own client"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				as := authtest.New(&authtest.Options{OpaqueTokens: ep == authtest.EndpointIntrospection})
				t.Cleanup(as.Close)
				var log mcptest.LogBuffer
				e := newEnv(t, envConfig{as: as, opts: func(o *auth.Options, as *authtest.Server, _ string) {
					o.HTTPClient = nil
					if own {
						o.HTTPClient = &http.Client{Timeout: time.Minute}
					}
					if ep == authtest.EndpointIntrospection {
						o.Issuers[0].Introspection = &auth.Introspection{Endpoint: as.Issuer + "/introspect",
							ClientID: as.IntrospectionClientID, ClientSecret: as.IntrospectionSecret}
					}
					o.Logger = logTo(&log)
				}})
				as.SetRedirect(ep, true)
				tok := e.token("mcp")
				if ep == authtest.EndpointIntrospection {
					tok = as.Opaque(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"})
				}
				r := e.do(t, tok, call("echo"))
				if r.status != http.StatusServiceUnavailable || as.Moved() != 0 {
					t.Fatalf("307 from %s: status %d, %d requests followed it; want 503 and none", ep, r.status, as.Moved())
				}
				if !strings.Contains(log.String(), "redirect") {
					t.Fatalf("the log does not say a redirect was refused: %s", log.String())
				}
			})
		}
	}
}
