package oauthflow_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
)

// rsSeen is what a dpopRS saw: the MCP requests that carried a token
// with the DPoP scheme, those that carried a DPoP proof, and its answers
// that demanded a nonce (401 use_dpop_nonce, RFC 9449 §9).
type rsSeen struct {
	mu                           sync.Mutex
	dpopScheme, proofs, demanded int
	proofSet                     map[string]bool // distinct proofs
}

func (s *rsSeen) counts() (dpopScheme, proofs, distinct, demanded int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dpopScheme, s.proofs, len(s.proofSet), s.demanded
}

// statusWriter keeps the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// dpopRS is a core server protected by auth.ProtectedResource with
// dpop (nil: Bearer only), whose tool "who" answers the thumbprint of the
// caller's DPoP key ("bearer" for a Bearer token).
func dpopRS(t *testing.T, as *authtest.Server, dpop *auth.DPoPOptions) (string, *rsSeen) {
	t.Helper()
	var h http.Handler
	seen := &rsSeen{proofSet: map[string]bool{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		seen.mu.Lock()
		defer seen.mu.Unlock()
		if strings.HasPrefix(r.Header.Get("Authorization"), "DPoP ") {
			seen.dpopScheme++
		}
		if p := r.Header.Get("DPoP"); p != "" {
			seen.proofs++
			seen.proofSet[p] = true
		}
		if sw.status == http.StatusUnauthorized && strings.Contains(w.Header().Get("WWW-Authenticate"), `error="use_dpop_nonce"`) && w.Header().Get("DPoP-Nonce") != "" {
			seen.demanded++
		}
	}))
	t.Cleanup(ts.Close)
	resource := ts.URL + "/mcp"
	rs, err := auth.New(&auth.Options{Resource: resource, Issuers: []auth.Issuer{{Issuer: as.Issuer}}, Required: []string{"mcp"},
		ScopesSupported: []string{"mcp"}, DPoP: dpop, HTTPClient: as.Client()})
	if err != nil {
		t.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "dpop", Version: "1"}, &core.ServerOptions{Authenticator: rs})
	core.AddTool(srv, &core.Tool{Name: "who"}, func(ctx context.Context, _ *core.CallToolRequest, _ struct{}) (string, error) {
		if jkt := auth.TokenInfoFromContext(ctx).DPoPThumbprint; jkt != "" {
			return jkt, nil
		}
		return "bearer", nil
	})
	h = srv
	return resource, seen
}

// who calls the tool "who" and returns its answer.
func who(t *testing.T, c *client.Conn) string {
	t.Helper()
	res, err := c.CallTool(t.Context(), "who", nil, nil)
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("who: %v %+v", err, res)
	}
	tc, ok := res.Content[0].(*core.TextContent)
	if !ok {
		t.Fatalf("who: %T", res.Content[0])
	}
	return tc.Text
}

// TestDPoPEndToEnd: an oauth.Source against an authorization server that
// binds tokens and demands its nonce, and a resource that requires DPoP
// and its own nonce: the client gets a bound token (after one
// use_dpop_nonce at the token endpoint), and every MCP request carries a
// fresh proof (the resource refuses replays) with the resource's nonce.
func TestDPoPEndToEnd(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{DPoP: true, DPoPNonce: true, Scopes: []string{"mcp"}})
	resource, seen := dpopRS(t, as, &auth.DPoPOptions{Required: true, NonceKey: []byte("0123456789abcdef0123456789abcdef")})
	src := oauth.New(codeConfig())
	c, err := client.Connect(t.Context(), resource, &client.Options{TokenSource: src})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	jkt, err := src.DPoPThumbprint()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := who(t, c); got != jkt {
			t.Fatalf("the resource saw key %q, want the Source's %q", got, jkt)
		}
	}
	// Every request with the token used the DPoP scheme with a proof of
	// its own; the resource demanded its nonce once, and the retry
	// carried it.
	dpopScheme, proofs, distinct, demanded := seen.counts()
	if dpopScheme == 0 || proofs != dpopScheme || distinct != proofs {
		t.Fatalf("the resource saw %d DPoP-scheme requests, %d proofs, %d distinct", dpopScheme, proofs, distinct)
	}
	if demanded != 1 {
		t.Fatalf("the resource demanded a nonce %d times, want 1", demanded)
	}
	reqs := as.Requests(authtest.EndpointToken)
	if len(reqs) != 2 {
		t.Fatalf("%d token requests, want 2 (a use_dpop_nonce, then the token)", len(reqs))
	}
	for _, r := range reqs {
		if r.DPoP == "" {
			t.Fatal("a token request without a DPoP proof")
		}
	}
	if reqs[0].DPoP == reqs[1].DPoP {
		t.Fatal("the token request was retried with the same proof")
	}
}

// TestDPoPModes: DPoPAuto with a server that does not advertise DPoP,
// and DPoPOff with one that does, get Bearer tokens; DPoPRequire refuses
// a Bearer token; a configured DPoPKey is the key tokens are bound to.
func TestDPoPModes(t *testing.T) {
	t.Parallel()
	plain := newAS(t, authtest.Options{Scopes: []string{"mcp"}})
	bound := newAS(t, authtest.Options{DPoP: true, Scopes: []string{"mcp"}})
	for _, c := range []struct {
		name string
		as   *authtest.Server
		mode string
		want string // "bearer", "key", or "error"
	}{
		{"auto, plain server", plain, oauth.DPoPAuto, "bearer"},
		{"off, DPoP server", bound, oauth.DPoPOff, "bearer"},
		{"auto, DPoP server", bound, oauth.DPoPAuto, "key"},
		{"require, plain server", plain, oauth.DPoPRequire, "error"},
		{"require, DPoP server", bound, oauth.DPoPRequire, "key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resource, _ := dpopRS(t, c.as, &auth.DPoPOptions{})
			key, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
			cfg := codeConfig()
			cfg.DPoP, cfg.DPoPKey = c.mode, key
			src := oauth.New(cfg)
			conn, err := client.Connect(t.Context(), resource, &client.Options{TokenSource: src})
			if c.want == "error" {
				if !errors.Is(err, oauth.ErrNotDPoPBound) {
					t.Fatalf("connect: %v, want ErrNotDPoPBound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			want := "bearer"
			if c.want == "key" {
				want, _ = src.DPoPThumbprint()
			}
			if got := who(t, conn); got != want {
				t.Fatalf("the resource saw %q, want %q", got, want)
			}
		})
	}
}

// memStore is an oauth.Store in memory.
type memStore struct {
	mu sync.Mutex
	m  map[oauth.StoreKey]oauth.StoreEntry
}

func (s *memStore) Load(_ context.Context, k oauth.StoreKey) (*oauth.StoreEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[k]
	if !ok {
		return nil, nil
	}
	return &e, nil
}

func (s *memStore) Save(_ context.Context, k oauth.StoreKey, e *oauth.StoreEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[oauth.StoreKey]oauth.StoreEntry{}
	}
	s.m[k] = *e
	return nil
}

// TestDPoPStore: a saved DPoP-bound token is used by a Source with the
// same key, not by one with another key, which authorizes anew.
func TestDPoPStore(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{DPoP: true, Scopes: []string{"mcp"}})
	resource, _ := dpopRS(t, as, &auth.DPoPOptions{})
	st := &memStore{}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	run := func(k *ecdsa.PrivateKey) {
		cfg := codeConfig()
		cfg.Store, cfg.DPoPKey = st, k
		src := oauth.New(cfg)
		conn, err := client.Connect(t.Context(), resource, &client.Options{TokenSource: src})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		jkt, _ := src.DPoPThumbprint()
		if got := who(t, conn); got != jkt {
			t.Fatalf("the resource saw %q, want %q", got, jkt)
		}
	}
	run(key)
	n := len(as.Requests(authtest.EndpointToken))
	for _, e := range st.m {
		if e.DPoPJKT == "" {
			t.Fatal("the saved entry does not name its key")
		}
	}
	run(key) // the saved token
	if got := len(as.Requests(authtest.EndpointToken)); got != n {
		t.Fatalf("%d token requests with the same key, want %d (the saved token)", got, n)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	run(other)
	if got := len(as.Requests(authtest.EndpointToken)); got != n+1 {
		t.Fatalf("%d token requests with another key, want %d", got, n+1)
	}
}
