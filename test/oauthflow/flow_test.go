package oauthflow_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/client/oauth"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestCodeFlowStepUp: the whole authorization code flow in both eras, with
// a step-up on tools/call that must ask for the union of the scopes.
func TestCodeFlowStepUp(t *testing.T) {
	t.Parallel()
	for _, mode := range []core.Mode{core.ModeAuto, core.ModeLegacy} {
		t.Run(string(rune('0'+mode)), func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{})
			rs := newRS(t, as, mode)
			rs.challenge = true
			rs.scopeFor = func(m string) []string {
				if m == "tools/call" {
					return []string{"mcp:write"}
				}
				return []string{"mcp:basic"}
			}
			src := oauth.New(codeConfig())
			c := connect(t, rs, src)
			if _, err := c.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(t.Context(), "write", nil, nil)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			auth, tok, reg := snapshot(as)
			if len(auth) != 2 || len(tok) != 2 || len(reg) != 1 {
				t.Fatalf("authorize %d, token %d, register %d; want 2, 2, 1", len(auth), len(tok), len(reg))
			}
			if got := auth[0].Get("scope"); got != "mcp:basic" {
				t.Errorf("first scope %q", got)
			}
			if got := auth[1].Get("scope"); got != "mcp:basic mcp:write" {
				t.Errorf("step-up scope %q, want the union", got)
			}
			for i, q := range auth {
				if q.Get("resource") != rs.url || tok[i].Get("resource") != rs.url {
					t.Errorf("resource %q / %q, want %q", q.Get("resource"), tok[i].Get("resource"), rs.url)
				}
				if q.Get("state") == "" || q.Get("code_challenge_method") != "S256" {
					t.Errorf("authorize request %v", q)
				}
			}
			if reg[0]["application_type"] != "native" || !slices.Equal(toStrings(reg[0]["grant_types"]), []string{"authorization_code", "refresh_token"}) {
				t.Errorf("registration %v", reg[0])
			}
		})
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestScopeSelection: challenge scope, else PRM scopes_supported, else
// none; offline_access only when the AS lists it.
func TestScopeSelection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		challenge bool
		prm, as   []string
		want      string
	}{
		{"challenge", true, []string{"a", "b"}, nil, "mcp:basic"},
		{"scopes_supported", false, []string{"a", "b"}, nil, "a b"},
		{"omitted", false, nil, nil, ""},
		{"offline_access listed", false, []string{"a"}, []string{"a", "offline_access"}, "a offline_access"},
		{"offline_access not listed", false, []string{"a"}, []string{"a", "b"}, "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{Scopes: tc.as})
			rs := newRS(t, as, core.ModeAuto)
			rs.challenge, rs.scopes = tc.challenge, tc.prm
			rs.scopeFor = func(string) []string {
				if tc.challenge {
					return []string{"mcp:basic"}
				}
				return nil
			}
			connect(t, rs, oauth.New(codeConfig()))
			auth, _, _ := snapshot(as)
			if len(auth) != 1 {
				t.Fatalf("%d authorization requests", len(auth))
			}
			if _, has := auth[0]["scope"]; auth[0].Get("scope") != tc.want || (tc.want == "" && has) {
				t.Fatalf("scope %q (present %v), want %q", auth[0].Get("scope"), has, tc.want)
			}
		})
	}
}

// TestDiscoveryOrder: the metadata URLs tried, in order.
func TestDiscoveryOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, prefix, metaPath string
		want                   []string
	}{
		{"root issuer, oauth", "", "", []string{"/.well-known/oauth-authorization-server"}},
		{"root issuer, oidc", "", "/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"path issuer, insertion", "/tenant1", "", []string{"/.well-known/oauth-authorization-server/tenant1"}},
		{"path issuer, oidc appended", "/tenant1", "/tenant1/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{IssuerPath: tc.prefix, MetadataPath: tc.metaPath})
			rs := newRS(t, as, core.ModeAuto)
			connect(t, rs, oauth.New(codeConfig()))
			if got := metaGets(as); !slices.Equal(got, tc.want) {
				t.Fatalf("metadata GETs %v, want %v", got, tc.want)
			}
			rs.mu.Lock()
			prm := rs.prmGets
			rs.mu.Unlock()
			if !slices.Equal(prm, []string{"/.well-known/oauth-protected-resource/mcp"}) {
				t.Fatalf("PRM GETs %v", prm)
			}
		})
	}
}

// TestResourceMismatch: a PRM resource of another origin or a path that
// does not prefix the endpoint aborts before any authorization request.
func TestResourceMismatch(t *testing.T) {
	t.Parallel()
	for _, res := range []string{"https://evil.example.com/mcp", "{origin}/other", "{origin}/mc"} {
		as := newAS(t, authtest.Options{})
		rs := newRS(t, as, core.ModeAuto)
		rs.resource = strings.ReplaceAll(res, "{origin}", rs.origin)
		err := challengeFor(t, rs, oauth.New(codeConfig()))
		if !errors.Is(err, oauth.ErrResourceMismatch) {
			t.Fatalf("%s: %v, want ErrResourceMismatch", res, err)
		}
		if auth, _, _ := snapshot(as); len(auth) != 0 {
			t.Fatalf("%s: authorization requested", res)
		}
	}
	// The origin alone covers the endpoint.
	as := newAS(t, authtest.Options{})
	rs := newRS(t, as, core.ModeAuto)
	rs.resource = rs.origin
	if err := challengeFor(t, rs, oauth.New(codeConfig())); err != nil {
		t.Fatal(err)
	}
	if _, tok, _ := snapshot(as); tok[0].Get("resource") != rs.origin {
		t.Fatalf("resource sent %q, want the PRM's %q", tok[0].Get("resource"), rs.origin)
	}
}

// TestIss: the RFC 9207 table of 2026-07-28 §Authorization Response
// Validation.
func TestIss(t *testing.T) {
	t.Parallel()
	wrong := func(string) string { return "https://evil.example.com" }
	omit := func(string) string { return "" }
	normalized := func(issuer string) string { return issuer + "/" }
	notAdvertised := map[string]any{"authorization_response_iss_parameter_supported": nil}
	cases := []struct {
		name     string
		iss      func(string) string
		metadata map[string]any
		ok       bool
	}{
		{"advertised present", nil, nil, true},
		{"advertised absent", omit, nil, false},
		{"not advertised present wrong", wrong, notAdvertised, false},
		{"not advertised absent", omit, notAdvertised, true},
		{"advertised wrong", wrong, nil, false},
		{"trailing slash variant", normalized, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{Iss: tc.iss, Metadata: tc.metadata})
			rs := newRS(t, as, core.ModeAuto)
			err := challengeFor(t, rs, oauth.New(codeConfig()))
			_, tok, _ := snapshot(as)
			if tc.ok != (err == nil) || tc.ok != (len(tok) == 1) {
				t.Fatalf("err %v, token requests %d, want ok=%v", err, len(tok), tc.ok)
			}
			if !tc.ok && !errors.Is(err, oauth.ErrIssuerMismatch) {
				t.Fatalf("err %v, want ErrIssuerMismatch", err)
			}
		})
	}
	// On an iss mismatch the error fields are not acted on.
	as := newAS(t, authtest.Options{Iss: wrong, AuthorizeError: "access_denied"})
	err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig()))
	var oe *oauth.OAuthError
	if !errors.Is(err, oauth.ErrIssuerMismatch) || errors.As(err, &oe) {
		t.Fatalf("err %v, want an issuer mismatch and no OAuthError", err)
	}
	// With a matching iss the error is reported as an *OAuthError.
	as = newAS(t, authtest.Options{AuthorizeError: "access_denied"})
	err = challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig()))
	if !errors.As(err, &oe) || oe.Code != "access_denied" || oe.Endpoint != "authorization" {
		t.Fatalf("err %v, want OAuthError access_denied", err)
	}
}

// TestMetadataChecks: an issuer mismatch in the metadata, or no S256,
// stops before the metadata's endpoints are used.
func TestMetadataChecks(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{Metadata: map[string]any{"issuer": "https://attacker.example.com"}})
	err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig()))
	auth, tok, reg := snapshot(as)
	if !errors.Is(err, oauth.ErrIssuerMismatch) || len(auth)+len(tok)+len(reg) != 0 {
		t.Fatalf("issuer mismatch: err %v, used %d/%d/%d", err, len(auth), len(tok), len(reg))
	}
	as = newAS(t, authtest.Options{Metadata: map[string]any{"code_challenge_methods_supported": nil}})
	err = challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig()))
	auth, _, _ = snapshot(as)
	if !errors.Is(err, oauth.ErrNoPKCE) || len(auth) != 0 {
		t.Fatalf("no PKCE: err %v, %d authorization requests", err, len(auth))
	}
}

// TestTokenEndpointAuth: the method the registration and metadata name.
func TestTokenEndpointAuth(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"client_secret_basic", "client_secret_post", "none"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{AuthMethods: []string{m}})
			rs := newRS(t, as, core.ModeAuto)
			if err := challengeFor(t, rs, oauth.New(codeConfig())); err != nil {
				t.Fatal(err)
			}
			_, tok, reg := snapshot(as)
			hdr := tokenAuth(as)[0]
			basic := strings.HasPrefix(hdr, "Basic ")
			post := tok[0].Get("client_secret") != ""
			if basic != (m == "client_secret_basic") || post != (m == "client_secret_post") || reg[0]["token_endpoint_auth_method"] != m {
				t.Fatalf("basic %v post %v registered %v", basic, post, reg[0]["token_endpoint_auth_method"])
			}
		})
	}
}

// TestRegistrationChoice: pre-registered beats CIMD beats DCR; CIMD only
// when the AS supports it.
func TestRegistrationChoice(t *testing.T) {
	t.Parallel()
	// The client's Client ID Metadata Document, served on loopback.
	var cimd string
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mcptest.WriteJSON(w, 200, map[string]any{"client_id": cimd, "client_name": "mcpfn test", "redirect_uris": []string{redirect},
			"token_endpoint_auth_method": "none"})
	}))
	t.Cleanup(docs.Close)
	cimd = docs.URL + "/client.json"
	noDCR := map[string]any{"registration_endpoint": nil}
	t.Run("pre-registered", func(t *testing.T) {
		t.Parallel()
		as := newAS(t, authtest.Options{Metadata: noDCR, ClientIDMetadataDocuments: true, AuthMethods: []string{"client_secret_basic"}})
		as.AddClient(authtest.Client{ID: "pre", Secret: "s3cret", RedirectURIs: []string{redirect}})
		cfg := codeConfig()
		cfg.ClientMetadataURL = cimd
		cfg.Clients = func(issuer string) (oauth.Client, bool) {
			return oauth.Client{ID: "pre", Secret: "s3cret", Issuer: as.Issuer}, issuer == as.Issuer
		}
		if err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(cfg)); err != nil {
			t.Fatal(err)
		}
		auth, _, _ := snapshot(as)
		if auth[0].Get("client_id") != "pre" {
			t.Fatalf("client_id %q", auth[0].Get("client_id"))
		}
	})
	t.Run("cimd", func(t *testing.T) {
		t.Parallel()
		as := newAS(t, authtest.Options{ClientIDMetadataDocuments: true})
		cfg := codeConfig()
		cfg.ClientMetadataURL = cimd
		if err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(cfg)); err != nil {
			t.Fatal(err)
		}
		auth, tok, reg := snapshot(as)
		if auth[0].Get("client_id") != cimd || tok[0].Get("client_id") != cimd || len(reg) != 0 {
			t.Fatalf("client_id %q, registrations %d", auth[0].Get("client_id"), len(reg))
		}
	})
	t.Run("no cimd support: dcr", func(t *testing.T) {
		t.Parallel()
		as := newAS(t, authtest.Options{})
		cfg := codeConfig()
		cfg.ClientMetadataURL = cimd
		if err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(cfg)); err != nil {
			t.Fatal(err)
		}
		if _, _, reg := snapshot(as); len(reg) != 1 {
			t.Fatalf("%d registrations", len(reg))
		}
	})
	t.Run("nothing", func(t *testing.T) {
		t.Parallel()
		as := newAS(t, authtest.Options{Metadata: noDCR})
		if err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig())); !errors.Is(err, oauth.ErrNoRegistration) {
			t.Fatalf("err %v", err)
		}
	})
}

// TestMigration: a new authorization server in the PRM means a new
// registration there and no credentials of the old one.
func TestMigration(t *testing.T) {
	t.Parallel()
	as1 := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	as2 := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}})
	rs := newRS(t, as1, core.ModeAuto)
	c := connect(t, rs, oauth.New(codeConfig()))
	rs.setAS(as2)
	if _, err := c.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	auth1, _, reg1 := snapshot(as1)
	auth2, _, reg2 := snapshot(as2)
	if len(reg1) != 1 || len(reg2) != 1 || len(auth2) != 1 {
		t.Fatalf("registrations %d/%d, authorizations at AS2 %d", len(reg1), len(reg2), len(auth2))
	}
	hdr := tokenAuth(as2)[0]
	if auth2[0].Get("client_id") == auth1[0].Get("client_id") || hdr == "" {
		t.Fatalf("AS2 saw client %q (AS1's is %q)", auth2[0].Get("client_id"), auth1[0].Get("client_id"))
	}
}

// inBubble runs f in a testing/synctest bubble with as and a protected
// MCP server on an in-memory network: the bubble's clock is the one of the
// client, the authorization server and the resource. cfg gets the
// network's HTTP client and a Headless user agent on it.
func inBubble(t *testing.T, as *authtest.Server, f func(t *testing.T, rs *testRS, cfg oauth.Config)) {
	synctest.Test(t, func(t *testing.T) {
		n := mcptest.NewNetwork()
		t.Cleanup(n.Close)
		n.ServeURL(as.URL, as.Handler())
		rs := newRSOn(t, n, as, core.ModeAuto)
		cfg := codeConfig()
		cfg.HTTPClient = n.Client()
		cfg.Authorize = oauth.Headless(n.Client())
		f(t, rs, *cfg)
	})
}

// TestRefresh: an expired token is refreshed (rotation kept); a 401 with
// a refresh token refreshes instead of authorizing again.
func TestRefresh(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{})
	inBubble(t, as, func(t *testing.T, rs *testRS, cfg oauth.Config) {
		src := oauth.New(&cfg)
		c := connect(t, rs, src)
		first, _ := src.Token(t.Context())
		time.Sleep(time.Hour) // the token's expires_in
		second, err := src.Token(t.Context())
		if err != nil || second == first || second == "" {
			t.Fatalf("after expiry: %q (was %q), %v", second, first, err)
		}
		// The server forgets every token: the 401 is answered by a refresh.
		as.RevokeIssued()
		if _, err := c.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		auth, tok, _ := snapshot(as)
		var grants []string
		for _, f := range tok {
			grants = append(grants, f.Get("grant_type"))
		}
		if len(auth) != 1 || !slices.Equal(grants, []string{"authorization_code", "refresh_token", "refresh_token"}) {
			t.Fatalf("authorizations %d, grants %v", len(auth), grants)
		}
		for _, f := range tok[1:] {
			if f.Get("resource") != rs.url {
				t.Fatalf("refresh without resource: %v", f)
			}
		}
	})
}

// TestUnavailable: a 503 from the token endpoint keeps the token and backs
// off; no request reaches the server while backing off.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	as := newAS(t, authtest.Options{TokenError: func(url.Values) *authtest.TokenError {
		if down.Load() {
			return &authtest.TokenError{Status: 503, Code: "temporarily_unavailable", RetryAfter: 7}
		}
		return nil
	}})
	inBubble(t, as, func(t *testing.T, rs *testRS, cfg oauth.Config) {
		src := oauth.New(&cfg)
		if err := challengeFor(t, rs, src); err != nil {
			t.Fatal(err)
		}
		first, _ := src.Token(t.Context())
		down.Store(true)
		time.Sleep(time.Hour)
		got, err := src.Token(t.Context())
		if err != nil || got != first {
			t.Fatalf("Token during 503: %q, %v; want the old token", got, err)
		}
		_, tok, _ := snapshot(as)
		n := len(tok)
		if got, _ := src.Token(t.Context()); got != first {
			t.Fatal("token lost")
		}
		if _, tok, _ := snapshot(as); len(tok) != n {
			t.Fatalf("token endpoint asked again while backing off (%d → %d)", n, len(tok))
		}
		time.Sleep(8 * time.Second) // past Retry-After: 7
		down.Store(false)
		if got, _ := src.Token(t.Context()); got == first {
			t.Fatal("not refreshed after the back-off")
		}
	})
}

// TestOAuthError: token endpoint errors are *OAuthError.
func TestOAuthError(t *testing.T) {
	t.Parallel()
	as := newAS(t, authtest.Options{TokenError: func(url.Values) *authtest.TokenError { return &authtest.TokenError{Status: 400} }})
	err := challengeFor(t, newRS(t, as, core.ModeAuto), oauth.New(codeConfig()))
	var oe *oauth.OAuthError
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Endpoint != "token" || oe.Code == "" {
		t.Fatalf("err %v", err)
	}
}

// TestClientCredentials: client_secret_basic and private_key_jwt.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, m := range []string{"client_secret_basic", "private_key_jwt"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			as := newAS(t, authtest.Options{AuthMethods: []string{m}})
			rs := newRS(t, as, core.ModeAuto)
			cl := oauth.Client{ID: "svc", Secret: "pw", Issuer: as.Issuer}
			as.AddClient(authtest.Client{ID: "svc", Secret: "pw"})
			if m == "private_key_jwt" {
				cl = oauth.Client{ID: "svc", Key: key, Issuer: as.Issuer}
				as.AddClient(authtest.Client{ID: "svc", Key: &key.PublicKey})
			}
			src := oauth.New(&oauth.Config{Grant: oauth.GrantClientCredentials,
				Clients: func(string) (oauth.Client, bool) { return cl, true }})
			c := connect(t, rs, src)
			if _, err := c.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			auth, tok, _ := snapshot(as)
			if len(auth) != 0 || len(tok) != 1 || tok[0].Get("grant_type") != "client_credentials" || tok[0].Get("resource") != rs.url {
				t.Fatalf("authorizations %d, token requests %v", len(auth), tok)
			}
		})
	}
}

// TestEnterprise: ID token → ID-JAG at the IdP (RFC 8693) → access token
// at the AS (RFC 7523); only the access token is kept.
func TestEnterprise(t *testing.T) {
	t.Parallel()
	idp := newAS(t, authtest.Options{})
	as := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}, IdentityProviders: []*authtest.Server{idp}})
	idp.AddClient(authtest.Client{ID: "idp-client", IDJAGClientIDs: map[string]string{as.Issuer: "xaa"}})
	as.AddClient(authtest.Client{ID: "xaa", Secret: "pw"})
	rs := newRS(t, as, core.ModeAuto)
	idToken := idp.IDToken(authtest.Claims{Subject: "user", Audience: []string{"idp-client"}})
	src := oauth.New(&oauth.Config{
		Grant: oauth.GrantJWTBearer,
		Clients: func(string) (oauth.Client, bool) {
			return oauth.Client{ID: "xaa", Secret: "pw", Issuer: as.Issuer}, true
		},
		Assertion: oauth.IDJAG(oauth.IdP{TokenEndpoint: idp.Issuer + "/token", ClientID: "idp-client",
			IDToken: func(context.Context) (string, error) { return idToken, nil }}),
	})
	c := connect(t, rs, src)
	if _, err := c.CallTool(t.Context(), "write", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, tok, _ := snapshot(as)
	_, exchanges, _ := snapshot(idp)
	if len(tok) != 1 || tok[0].Get("grant_type") != oauth.GrantJWTBearer || len(exchanges) != 1 ||
		exchanges[0].Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
		t.Fatalf("token requests %v, exchanges %v", tok, exchanges)
	}
}

// TestEnterpriseIdPByIssuer: an identity provider named by its issuer is
// found by its metadata (RFC 8414), and a confidential client
// authenticates the token exchange with the method the metadata lists:
// client_secret_basic by default, client_secret_post when that is all it
// lists. An IdP whose metadata lacks the token exchange grant, or the
// method asked for, gets no ID token.
func TestEnterpriseIdPByIssuer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, listed, method, want string }{
		{"basic", "client_secret_basic", "", "Basic "},
		{"post", "client_secret_post", "", ""},
		{"refused", "client_secret_post", oauth.AuthClientSecretBasic, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			idp := newAS(t, authtest.Options{AuthMethods: []string{tc.listed}})
			as := newAS(t, authtest.Options{AuthMethods: []string{"client_secret_basic"}, IdentityProviders: []*authtest.Server{idp}})
			idp.AddClient(authtest.Client{ID: "idp-client", Secret: "idp-pw", AuthMethod: tc.listed, IDJAGClientIDs: map[string]string{as.Issuer: "xaa"}})
			as.AddClient(authtest.Client{ID: "xaa", Secret: "pw"})
			rs := newRS(t, as, core.ModeAuto)
			idToken := idp.IDToken(authtest.Claims{Subject: "user", Audience: []string{"idp-client"}})
			var asked atomic.Int32
			src := oauth.New(&oauth.Config{
				Grant: oauth.GrantJWTBearer,
				Clients: func(string) (oauth.Client, bool) {
					return oauth.Client{ID: "xaa", Secret: "pw", Issuer: as.Issuer}, true
				},
				Assertion: oauth.IDJAG(oauth.IdP{Issuer: idp.Issuer, ClientID: "idp-client", ClientSecret: "idp-pw", AuthMethod: tc.method,
					IDToken: func(context.Context) (string, error) { asked.Add(1); return idToken, nil }}),
			})
			err := challengeFor(t, rs, src)
			_, exchanges, _ := snapshot(idp)
			if tc.want == "refused" {
				if err == nil || asked.Load() != 0 || len(exchanges) != 0 {
					t.Fatalf("err %v, ID token asked %d times, exchanges %v", err, asked.Load(), exchanges)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			auth := tokenAuth(idp)
			if len(exchanges) != 1 || !strings.HasPrefix(auth[0], tc.want) || (tc.want == "") != (exchanges[0].Get("client_secret") == "idp-pw") {
				t.Fatalf("exchanges %v, Authorization %q", exchanges, auth)
			}
			if _, tok, _ := snapshot(as); len(tok) != 1 || tok[0].Get("grant_type") != oauth.GrantJWTBearer {
				t.Fatalf("token requests %v", tok)
			}
		})
	}
}

// TestPrivateKeyJWTKeys: PEM keys of each form sign assertions the server
// verifies (ES256 from PKCS #8 and SEC 1, RS256 from PKCS #1).
func TestPrivateKeyJWTKeys(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	p8, _ := x509.MarshalPKCS8PrivateKey(ec)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	cases := []struct {
		name string
		pem  []byte
		pub  crypto.PublicKey
	}{
		{"pkcs8 ec", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), &ec.PublicKey},
		{"sec1 ec", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), &ec.PublicKey},
		{"pkcs1 rsa", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}), &rk.PublicKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key, err := oauth.ParsePrivateKeyPEM(tc.pem)
			if err != nil {
				t.Fatal(err)
			}
			as := newAS(t, authtest.Options{AuthMethods: []string{"private_key_jwt"}})
			as.AddClient(authtest.Client{ID: "svc", Key: tc.pub})
			src := oauth.New(&oauth.Config{Grant: oauth.GrantClientCredentials,
				Clients: func(string) (oauth.Client, bool) { return oauth.Client{ID: "svc", Key: key, Issuer: as.Issuer}, true }})
			if err := challengeFor(t, newRS(t, as, core.ModeAuto), src); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := oauth.ParsePrivateKeyPEM([]byte("not pem")); err == nil {
		t.Fatal("garbage parsed")
	}
}

// TestRefreshRejected: a 401 whose refresh is refused (invalid_grant)
// falls back to a new authorization.
func TestRefreshRejected(t *testing.T) {
	t.Parallel()
	var rejectRefresh atomic.Bool
	as := newAS(t, authtest.Options{TokenError: func(f url.Values) *authtest.TokenError {
		if rejectRefresh.Load() && f.Get("grant_type") == "refresh_token" {
			return &authtest.TokenError{Status: 400}
		}
		return nil
	}})
	rs := newRS(t, as, core.ModeAuto)
	c := connect(t, rs, oauth.New(codeConfig()))
	rejectRefresh.Store(true)
	as.RevokeIssued()
	if _, err := c.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	auth, tok, _ := snapshot(as)
	if len(auth) != 2 || len(tok) != 3 || tok[1].Get("grant_type") != "refresh_token" {
		t.Fatalf("authorizations %d, token requests %d", len(auth), len(tok))
	}
}
