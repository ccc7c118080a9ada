package oauthflow_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// prmServer serves a protected resource metadata document naming resource
// and issuer at every path, and counts the requests it gets.
func prmServer(t *testing.T, resource, issuer string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mcptest.WriteJSON(w, 200, map[string]any{"resource": resource, "authorization_servers": []string{issuer}})
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// prmChallenge is the error of a Source of cfg taking the 401 of endpoint
// whose challenge names the protected resource metadata prmServer serves
// at prmURL.
func prmChallenge(t *testing.T, cfg *oauth.Config, endpoint, prmURL string) error {
	return oauth.New(cfg).Challenge(t.Context(), endpoint, challenge401(`Bearer resource_metadata="`+prmURL+`/prm"`))
}

// TestPlainHTTPEndpoint: a non-loopback http:// MCP endpoint is never
// authorized, since its token would travel in clear (2026-07-28
// basic/authorization: the MCP server, authorization server and client
// metadata URLs use HTTPS, except on a loopback host). Nothing is fetched.
func TestPlainHTTPEndpoint(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{})
	const endpoint = "http://mcp.example.test/mcp"
	prm, hits := prmServer(t, endpoint, as.Issuer)
	err := prmChallenge(t, codeConfig(), endpoint, prm.URL)
	if !errors.Is(err, oauth.ErrInsecureURL) {
		t.Fatalf("http endpoint: %v, want ErrInsecureURL", err)
	}
	if hits.Load() != 0 || asTraffic(as) != 0 {
		t.Fatalf("%d metadata requests, %d at the authorization server; want none", hits.Load(), asTraffic(as))
	}
}

// TestClientMetadataURLChecked: a Client ID Metadata Document URL must be
// https with a path (or http on a loopback host); a bad one fails the flow
// before the authorization server sees it as a client_id.
func TestClientMetadataURLChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"http://client.example.com/client.json", "https://client.example.com", "https://client.example.com/", "ftp://client.example.com/c.json", "https://client.example.com/c.json#x"} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{ClientIDMetadataDocuments: true})
			cfg := codeConfig()
			cfg.ClientMetadataURL = bad
			err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(cfg))
			auth, tok, _ := snapshot(as)
			if !errors.Is(err, oauth.ErrInsecureURL) || len(auth)+len(tok) != 0 {
				t.Fatalf("ClientMetadataURL %q: %v; %d authorization and %d token requests", bad, err, len(auth), len(tok))
			}
		})
	}
}

// TestRemoteEndpointStaysRemote: a remote https MCP server cannot steer the
// client to loopback. Its challenge names a loopback resource_metadata
// whose document names a loopback authorization server; the client must
// fetch nothing there (no GET of the metadata, no registration POST, no
// token request with the client's credentials).
func TestRemoteEndpointStaysRemote(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	const endpoint = "https://mcp.example.test/mcp"
	prm, hits := prmServer(t, endpoint, as.Issuer)
	err := prmChallenge(t, codeConfig(), endpoint, prm.URL)
	if !errors.Is(err, oauth.ErrLocalAddress) {
		t.Errorf("loopback metadata for a remote endpoint: %v, want ErrLocalAddress", err)
	}
	if hits.Load() != 0 || asTraffic(as) != 0 {
		t.Fatalf("the remote endpoint's flow reached loopback: %d metadata requests, %d at the authorization server", hits.Load(), asTraffic(as))
	}

	// Config.AllowPrivateNetwork is the explicit way in.
	cfg := codeConfig()
	cfg.AllowPrivateNetwork = true
	if err := prmChallenge(t, cfg, endpoint, prm.URL); err != nil {
		t.Fatalf("AllowPrivateNetwork: %v", err)
	}
}

// TestClientBoundToIssuer: a pre-registered client's credentials go only to
// the authorization server it is registered with. The resource names a
// hostile authorization server and Config.Clients answers for any issuer:
// the hostile token endpoint must not see the secret.
func TestClientBoundToIssuer(t *testing.T) {
	t.Parallel()
	good := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	good.AddClient(authtest.Client{ID: "svc", Secret: "pw"})
	evil := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	rs := newRS(t, evil, core.ModeAuto)
	careless := oauth.Config{Grant: oauth.GrantClientCredentials,
		Clients: func(string) (oauth.Client, bool) { return oauth.Client{ID: "svc", Secret: "pw"}, true }}
	bound := oauth.Config{Grant: oauth.GrantClientCredentials,
		Clients: func(string) (oauth.Client, bool) {
			return oauth.Client{ID: "svc", Secret: "pw", Issuer: good.Issuer}, true
		}}
	for name, cfg := range map[string]oauth.Config{"careless": careless, "bound": bound} {
		err := challengeFor(t, rs, oauth.New(&cfg))
		if err == nil || !errors.Is(err, oauth.ErrClientIssuer) {
			t.Errorf("%s: %v, want ErrClientIssuer", name, err)
		}
	}
	for _, h := range tokenAuth(evil) {
		if h != "" {
			t.Fatalf("the hostile token endpoint got credentials %q", h)
		}
	}
	if n := len(evil.Requests(authtest.EndpointToken)); n != 0 {
		t.Fatalf("%d token requests at the hostile server", n)
	}

	// With its own issuer the bound client works.
	rs.setAS(good)
	if err := challengeFor(t, rs, oauth.New(&bound)); err != nil {
		t.Fatal(err)
	}
	if _, tok, _ := snapshot(good); len(tok) != 1 || !strings.HasPrefix(tokenAuth(good)[0], "Basic ") {
		t.Fatalf("token requests at the right server: %v", tok)
	}
}

// TestClientAtAnyListedServer: a pre-registered client is used at the
// authorization server it is bound to wherever the protected resource
// metadata lists it, not only first (RFC 9728 §2); the servers listed
// ahead of it see no request. Without a pre-registered client the first
// listed server is used.
func TestClientAtAnyListedServer(t *testing.T) {
	t.Parallel()
	other := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	good := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	good.AddClient(authtest.Client{ID: "svc", Secret: "pw"})
	rs := newRS(t, good, core.ModeAuto)
	rs.mu.Lock()
	rs.before = []string{other.Issuer}
	rs.mu.Unlock()
	src := oauth.New(&oauth.Config{Grant: oauth.GrantClientCredentials,
		Clients: func(iss string) (oauth.Client, bool) {
			if iss != good.Issuer {
				return oauth.Client{}, false
			}
			return oauth.Client{ID: "svc", Secret: "pw", Issuer: good.Issuer}, true
		}})
	c := connect(t, rs, src)
	if _, err := c.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, tok, _ := snapshot(good); len(tok) != 1 || !strings.HasPrefix(tokenAuth(good)[0], "Basic ") {
		t.Fatalf("token requests at the bound server: %v", tok)
	}
	if n := asTraffic(other); n != 0 {
		t.Fatalf("%d requests at the server listed first", n)
	}

	// No pre-registered client: the first listed server (dynamic
	// registration there).
	err := challengeFor(t, rs, oauth.New(codeConfig()))
	if n := len(other.Requests(authtest.EndpointRegistration)); n != 1 {
		t.Fatalf("registrations at the first listed server: %d (%v)", n, err)
	}
}
