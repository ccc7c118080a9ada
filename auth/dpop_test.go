package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// The black-box tests of DPoP (RFC 9449) at the protected resource: tokens
// bound by authtest's token endpoint to keys made here, proofs minted here.

// dpopKey is a client's DPoP key.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	jwk  jwk.Key // public
}

func newDPoPKey(t testing.TB) *dpopKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.FromRaw(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return &dpopKey{priv: k, jwk: pub}
}

func (k *dpopKey) thumbprint(t testing.TB) string {
	tp, err := k.jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

// proofSpec describes a proof; the zero values of the fields give a valid
// one for a POST to htu with token.
type proofSpec struct {
	method, htu, token, nonce string
	iat                       time.Time
	// edit changes the header and the claims before signing.
	edit func(h jws.Headers, c map[string]any)
	alg  jwa.SignatureAlgorithm
}

// proof mints a DPoP proof JWT with k.
func (k *dpopKey) proof(t testing.TB, s proofSpec) string {
	t.Helper()
	if s.method == "" {
		s.method = http.MethodPost
	}
	if s.iat.IsZero() {
		s.iat = time.Now()
	}
	jti := make([]byte, 16)
	rand.Read(jti)
	c := map[string]any{"jti": base64.RawURLEncoding.EncodeToString(jti), "htm": s.method, "htu": s.htu, "iat": s.iat.Unix()}
	if s.token != "" {
		sum := sha256.Sum256([]byte(s.token))
		c["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if s.nonce != "" {
		c["nonce"] = s.nonce
	}
	h := jws.NewHeaders()
	h.Set(jws.TypeKey, "dpop+jwt")
	h.Set(jws.JWKKey, k.jwk)
	if s.edit != nil {
		s.edit(h, c)
	}
	payload, _ := json.Marshal(c)
	alg := s.alg
	if alg == "" {
		alg = jwa.ES256
	}
	b, err := jws.Sign(payload, jws.WithKey(alg, k.priv, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// boundToken obtains an access token for the env's resource from the
// authorization server's token endpoint, with a proof of k: a DPoP-bound
// token (cnf.jkt), token_type DPoP.
func boundToken(t testing.TB, e *env, k *dpopKey, scope string) string {
	t.Helper()
	e.as.AddClient(authtest.Client{ID: "svc", Secret: "svc-secret"})
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {e.resource}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, e.as.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("svc", "svc-secret")
	req.Header.Set("DPoP", k.proof(t, proofSpec{htu: e.as.Issuer + "/token"}))
	resp, err := e.as.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		Error       string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&tr)
	if resp.StatusCode != http.StatusOK || tr.TokenType != "DPoP" || tr.AccessToken == "" {
		t.Fatalf("token request: %d %+v", resp.StatusCode, tr)
	}
	return tr.AccessToken
}

// dpopEnv is an env whose resource accepts DPoP with o (nil: defaults) and
// whose authorization server binds tokens.
func dpopEnv(t *testing.T, o *auth.DPoPOptions) *env {
	t.Helper()
	as := authtest.New(&authtest.Options{DPoP: true, AuthMethods: []string{"client_secret_basic"}})
	t.Cleanup(as.Close)
	if o == nil {
		o = &auth.DPoPOptions{}
	}
	return newEnv(t, envConfig{as: as, opts: func(opts *auth.Options, _ *authtest.Server, _ string) { opts.DPoP = o }})
}

// doDPoP sends q with "Authorization: DPoP tok" and the proofs given.
func (e *env) doDPoP(t testing.TB, tok string, q rpc, proofs ...string) *reply {
	t.Helper()
	q.header = map[string][]string{"Authorization": {"DPoP " + tok}}
	if len(proofs) > 0 {
		q.header["Dpop"] = proofs
	}
	return e.do(t, "", q)
}

// challenges returns the challenges of r by scheme.
func challenges(t testing.TB, r *reply) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, c := range mcp.ParseWWWAuthenticate(r.header) {
		out[c.Scheme] = c.Params
	}
	return out
}

// wantDPoPError checks a 401 whose DPoP challenge says code.
func wantDPoPError(t *testing.T, r *reply, code string) {
	t.Helper()
	if r.status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 (%s)", r.status, r.body)
	}
	ch := challenges(t, r)["DPoP"]
	if ch == nil || ch["error"] != code {
		t.Fatalf("DPoP challenge %v (all: %q), want error=%q", ch, r.header.Values("WWW-Authenticate"), code)
	}
}

func TestDPoPBoundToken(t *testing.T) {
	e := dpopEnv(t, nil)
	k := newDPoPKey(t)
	tok := boundToken(t, e, k, "mcp")

	p := k.proof(t, proofSpec{htu: e.resource, token: tok})
	r := e.doDPoP(t, tok, call("echo"), p)
	if r.status != http.StatusOK || !strings.HasPrefix(r.text(), "hello ") {
		t.Fatalf("valid proof: %d %s", r.status, r.body)
	}
	// The same proof again is a replay (RFC 9449 §11.1).
	wantDPoPError(t, e.doDPoP(t, tok, call("echo"), p), "invalid_dpop_proof")
	// A fresh proof passes again.
	if r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok})); r.status != http.StatusOK {
		t.Fatalf("fresh proof after a replay: %d %s", r.status, r.body)
	}
	// An htu spelled differently but equal after normalization (case of
	// scheme and host, a query) is the same URI (RFC 9449 §4.3).
	u, _ := url.Parse(e.resource)
	odd := strings.ToUpper(u.Scheme) + "://" + strings.ToUpper(u.Host) + u.Path + "?x=1"
	if r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: odd, token: tok})); r.status != http.StatusOK {
		t.Fatalf("normalized htu: %d %s", r.status, r.body)
	}
}

func TestDPoPProofRefused(t *testing.T) {
	e := dpopEnv(t, nil)
	k := newDPoPKey(t)
	other := newDPoPKey(t)
	tok := boundToken(t, e, k, "mcp")
	u, _ := url.Parse(e.resource)

	for _, c := range []struct {
		name  string
		proof func() []string
	}{
		{"no proof", func() []string { return nil }},
		{"two proofs", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok}), k.proof(t, proofSpec{htu: e.resource, token: tok})}
		}},
		{"wrong htm", func() []string {
			return []string{k.proof(t, proofSpec{method: http.MethodGet, htu: e.resource, token: tok})}
		}},
		{"wrong htu path", func() []string { return []string{k.proof(t, proofSpec{htu: e.resource + "/other", token: tok})} }},
		{"wrong htu host", func() []string {
			return []string{k.proof(t, proofSpec{htu: "http://other.example" + u.Path, token: tok})}
		}},
		{"wrong htu scheme", func() []string {
			return []string{k.proof(t, proofSpec{htu: "https://" + u.Host + u.Path, token: tok})}
		}},
		{"stale iat", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, iat: time.Now().Add(-2 * time.Minute)})}
		}},
		{"future iat", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, iat: time.Now().Add(time.Minute)})}
		}},
		{"ath of another token", func() []string { return []string{k.proof(t, proofSpec{htu: e.resource, token: tok + "x"})} }},
		{"no ath", func() []string { return []string{k.proof(t, proofSpec{htu: e.resource})} }},
		{"another key", func() []string { return []string{other.proof(t, proofSpec{htu: e.resource, token: tok})} }},
		{"typ JWT", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, edit: func(h jws.Headers, _ map[string]any) { h.Set(jws.TypeKey, "JWT") }})}
		}},
		{"no jti", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, edit: func(_ jws.Headers, c map[string]any) { delete(c, "jti") }})}
		}},
		{"iat a string", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, edit: func(_ jws.Headers, c map[string]any) { c["iat"] = "now" }})}
		}},
		{"private jwk", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, edit: func(h jws.Headers, _ map[string]any) {
				priv, _ := jwk.FromRaw(k.priv)
				h.Set(jws.JWKKey, priv)
			}})}
		}},
		{"signature of another key", func() []string {
			return []string{k.proof(t, proofSpec{htu: e.resource, token: tok, edit: func(h jws.Headers, _ map[string]any) { h.Set(jws.JWKKey, other.jwk) }})}
		}},
		{"tampered payload", func() []string {
			p := strings.Split(k.proof(t, proofSpec{htu: e.resource, token: tok}), ".")
			c, _ := json.Marshal(map[string]any{"jti": "x", "htm": "POST", "htu": e.resource, "iat": time.Now().Unix()})
			return []string{p[0] + "." + base64.RawURLEncoding.EncodeToString(c) + "." + p[2]}
		}},
		{"HS256", func() []string {
			h := jws.NewHeaders()
			h.Set(jws.TypeKey, "dpop+jwt")
			h.Set(jws.JWKKey, k.jwk)
			sum := sha256.Sum256([]byte(tok))
			c, _ := json.Marshal(map[string]any{"jti": "hs", "htm": "POST", "htu": e.resource, "iat": time.Now().Unix(), "ath": base64.RawURLEncoding.EncodeToString(sum[:])})
			b, err := jws.Sign(c, jws.WithKey(jwa.HS256, []byte("0123456789abcdef0123456789abcdef"), jws.WithProtectedHeaders(h)))
			if err != nil {
				t.Fatal(err)
			}
			return []string{string(b)}
		}},
		{"huge", func() []string { return []string{strings.Repeat("a", auth.MaxDPoPProofBytes+1)} }},
		{"garbage", func() []string { return []string{"not.a.jwt"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantDPoPError(t, e.doDPoP(t, tok, call("echo"), c.proof()...), "invalid_dpop_proof")
		})
	}
	// After all that, a valid proof still passes: nothing above was
	// remembered against the client.
	if r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok})); r.status != http.StatusOK {
		t.Fatalf("valid proof: %d %s", r.status, r.body)
	}
}

// TestDPoPDowngrade: a DPoP-bound token presented with the Bearer scheme
// is refused (RFC 9449 §7.2), whether the resource accepts DPoP or not,
// with or without a proof beside it.
func TestDPoPDowngrade(t *testing.T) {
	for _, withDPoP := range []bool{true, false} {
		as := authtest.New(&authtest.Options{DPoP: true, AuthMethods: []string{"client_secret_basic"}})
		t.Cleanup(as.Close)
		e := newEnv(t, envConfig{as: as, opts: func(o *auth.Options, _ *authtest.Server, _ string) {
			if withDPoP {
				o.DPoP = &auth.DPoPOptions{}
			}
		}})
		k := newDPoPKey(t)
		tok := boundToken(t, e, k, "mcp")
		for _, proof := range []bool{false, true} {
			q := call("echo")
			if proof {
				q.header = map[string][]string{"Dpop": {k.proof(t, proofSpec{htu: e.resource, token: tok})}}
			}
			r := e.do(t, tok, q)
			if r.status != http.StatusUnauthorized || challenges(t, r)["Bearer"]["error"] != "invalid_token" {
				t.Fatalf("DPoP accepted %v, proof %v: Bearer with a bound token: %d %q", withDPoP, proof, r.status, r.header.Values("WWW-Authenticate"))
			}
		}
		if !withDPoP {
			// The DPoP scheme is not accepted at all: no credentials.
			r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok}))
			if r.status != http.StatusUnauthorized || challenges(t, r)["Bearer"] == nil || challenges(t, r)["DPoP"] != nil {
				t.Fatalf("DPoP scheme without Options.DPoP: %d %q", r.status, r.header.Values("WWW-Authenticate"))
			}
		}
	}
}

// TestDPoPUnboundToken: the DPoP scheme with a token that has no cnf.jkt
// is refused, the proof notwithstanding; the same token as a Bearer token
// passes, unless DPoP is required.
func TestDPoPUnboundToken(t *testing.T) {
	e := dpopEnv(t, nil)
	k := newDPoPKey(t)
	tok := e.token("mcp") // minted without cnf
	wantDPoPError(t, e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok})), "invalid_token")
	if r := e.do(t, tok, call("echo")); r.status != http.StatusOK {
		t.Fatalf("unbound token as Bearer: %d %s", r.status, r.body)
	}
	// A malformed cnf is no binding to trust either way.
	bad := e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp", Extra: map[string]any{"cnf": "x"}})
	if r := e.do(t, bad, call("echo")); r.status != http.StatusUnauthorized {
		t.Fatalf("malformed cnf as Bearer: %d", r.status)
	}

	req := dpopEnv(t, &auth.DPoPOptions{Required: true})
	r := req.do(t, req.token("mcp"), call("echo"))
	chs := challenges(t, r)
	if r.status != http.StatusUnauthorized || chs["Bearer"] != nil || chs["DPoP"]["error"] != "invalid_token" {
		t.Fatalf("Bearer with DPoP required: %d %q", r.status, r.header.Values("WWW-Authenticate"))
	}
}

// TestDPoPChallenges: without credentials, the challenges name both
// schemes, DPoP with the accepted algorithms (RFC 9449 §7.1); the metadata
// lists them (RFC 9728 §2).
func TestDPoPChallenges(t *testing.T) {
	e := dpopEnv(t, &auth.DPoPOptions{Algorithms: []string{"ES256", "EdDSA"}})
	r := e.do(t, "", call("echo"))
	chs := challenges(t, r)
	if r.status != http.StatusUnauthorized || chs["Bearer"]["resource_metadata"] == "" || chs["DPoP"]["algs"] != "ES256 EdDSA" || chs["DPoP"]["resource_metadata"] == "" {
		t.Fatalf("challenges: %d %q", r.status, r.header.Values("WWW-Authenticate"))
	}
	resp, err := e.hc.Get(e.origin + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	json.NewDecoder(resp.Body).Decode(&md)
	if algs, _ := md["dpop_signing_alg_values_supported"].([]any); len(algs) != 2 || md["dpop_bound_access_tokens_required"] != nil {
		t.Fatalf("metadata: %v", md)
	}
	if _, err := auth.New(&auth.Options{Resource: e.resource, Issuers: []auth.Issuer{{Issuer: e.as.Issuer}}, DPoP: &auth.DPoPOptions{Algorithms: []string{"HS256"}}}); err == nil {
		t.Fatal("HS256 accepted as a DPoP algorithm")
	}
	if _, err := auth.New(&auth.Options{Resource: e.resource, Issuers: []auth.Issuer{{Issuer: e.as.Issuer}}, DPoP: &auth.DPoPOptions{NonceKey: []byte("short")}}); err == nil {
		t.Fatal("a short NonceKey accepted")
	}
}

// TestDPoPNonce: with NonceKey, a proof without a nonce is answered 401
// use_dpop_nonce with a DPoP-Nonce; the proof with it passes; a forged
// nonce is refused; another replica with the same key accepts the nonce
// (RFC 9449 §9).
func TestDPoPNonce(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	e := dpopEnv(t, &auth.DPoPOptions{NonceKey: key})
	k := newDPoPKey(t)
	tok := boundToken(t, e, k, "mcp")

	r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok}))
	wantDPoPError(t, r, "use_dpop_nonce")
	nonce := r.header.Get("DPoP-Nonce")
	if nonce == "" {
		t.Fatal("no DPoP-Nonce")
	}
	if r := e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok, nonce: nonce})); r.status != http.StatusOK {
		t.Fatalf("proof with the nonce: %d %s", r.status, r.body)
	}
	forged := nonce[:len(nonce)-2] + "AA"
	if forged == nonce {
		forged = nonce[:len(nonce)-2] + "BB"
	}
	wantDPoPError(t, e.doDPoP(t, tok, call("echo"), k.proof(t, proofSpec{htu: e.resource, token: tok, nonce: forged})), "use_dpop_nonce")

	// A replica: the same authorization server and NonceKey.
	e2 := newEnv(t, envConfig{as: e.as, opts: func(o *auth.Options, _ *authtest.Server, _ string) { o.DPoP = &auth.DPoPOptions{NonceKey: key} }})
	tok2 := boundToken(t, e2, k, "mcp")
	if r := e2.doDPoP(t, tok2, call("echo"), k.proof(t, proofSpec{htu: e2.resource, token: tok2, nonce: nonce})); r.status != http.StatusOK {
		t.Fatalf("replica with the same key: %d %s", r.status, r.body)
	}
	// A replica with another key does not accept it.
	e3 := newEnv(t, envConfig{as: e.as, opts: func(o *auth.Options, _ *authtest.Server, _ string) {
		o.DPoP = &auth.DPoPOptions{NonceKey: []byte("another key, 32 bytes long......")}
	}})
	tok3 := boundToken(t, e3, k, "mcp")
	wantDPoPError(t, e3.doDPoP(t, tok3, call("echo"), k.proof(t, proofSpec{htu: e3.resource, token: tok3, nonce: nonce})), "use_dpop_nonce")
}

// TestDPoPInsufficientScope: a DPoP caller's 403 names the scopes in the
// DPoP challenge.
func TestDPoPInsufficientScope(t *testing.T) {
	e := dpopEnv(t, nil)
	k := newDPoPKey(t)
	tok := boundToken(t, e, k, "mcp")
	r := e.doDPoP(t, tok, call("write"), k.proof(t, proofSpec{htu: e.resource, token: tok}))
	ch := challenges(t, r)["DPoP"]
	if r.status != http.StatusForbidden || ch["error"] != "insufficient_scope" || !strings.Contains(ch["scope"], "files:write") {
		t.Fatalf("403: %d %q", r.status, r.header.Values("WWW-Authenticate"))
	}
}

// TestAuthtestDPoPNonce: authtest's token endpoint under DPoPNonce
// demands its nonce (RFC 9449 §8) before it looks at the grant.
func TestAuthtestDPoPNonce(t *testing.T) {
	as := authtest.New(&authtest.Options{DPoP: true, DPoPNonce: true, AuthMethods: []string{"client_secret_basic"}})
	t.Cleanup(as.Close)
	as.AddClient(authtest.Client{ID: "svc", Secret: "s"})
	k := newDPoPKey(t)
	post := func(nonce string) (*http.Response, map[string]any) {
		form := url.Values{"grant_type": {"client_credentials"}, "resource": {"https://mcp.example.com/mcp"}}
		req, _ := http.NewRequest(http.MethodPost, as.Issuer+"/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("svc", "s")
		req.Header.Set("DPoP", k.proof(t, proofSpec{htu: as.Issuer + "/token", nonce: nonce}))
		resp, err := as.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp, m
	}
	resp, m := post("")
	if resp.StatusCode != http.StatusBadRequest || m["error"] != "use_dpop_nonce" || resp.Header.Get("DPoP-Nonce") != as.DPoPNonce() {
		t.Fatalf("without nonce: %d %v %q", resp.StatusCode, m, resp.Header.Get("DPoP-Nonce"))
	}
	resp, m = post(as.DPoPNonce())
	if resp.StatusCode != http.StatusOK || m["token_type"] != "DPoP" {
		t.Fatalf("with nonce: %d %v", resp.StatusCode, m)
	}
	// The token is bound to k.
	parts := strings.Split(m["access_token"].(string), ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Cnf struct {
			JKT string `json:"jkt"`
		} `json:"cnf"`
	}
	json.Unmarshal(b, &claims)
	if claims.Cnf.JKT != k.thumbprint(t) {
		t.Fatalf("cnf.jkt %q, want %q", claims.Cnf.JKT, k.thumbprint(t))
	}
	old := as.DPoPNonce()
	as.RotateDPoPNonce()
	if resp, m := post(old); resp.StatusCode != http.StatusBadRequest || m["error"] != "use_dpop_nonce" {
		t.Fatalf("old nonce after rotation: %d %v", resp.StatusCode, m)
	}
}

// TestDPoPIntrospectedToken: an opaque token whose introspection answer
// binds it to a key (token_type DPoP, cnf.jkt; RFC 9449 §6.2) passes with
// a proof of that key, and is refused as a bearer token, with a proof of
// another key, and when the answer names no key.
func TestDPoPIntrospectedToken(t *testing.T) {
	t.Parallel()
	asBubble(t, &authtest.Options{OpaqueTokens: true}, func(t *testing.T, as *authtest.Server) {
		in := auth.Introspection{Endpoint: as.Issuer + "/introspect", ClientID: as.IntrospectionClientID, ClientSecret: as.IntrospectionSecret}
		rs := bubbleResourceFor(t, as, auth.Options{Issuers: []auth.Issuer{{Issuer: as.Issuer, Introspection: &in}}, DPoP: &auth.DPoPOptions{}})
		k, other := newDPoPKey(t), newDPoPKey(t)
		send := func(scheme, tok, proof string) int {
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, bubbleResource, nil)
			r.Header.Set("Authorization", scheme+" "+tok)
			if proof != "" {
				r.Header.Set("DPoP", proof)
			}
			_, err := rs.Authenticate(r)
			if err == nil {
				return http.StatusOK
			}
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Authenticate: %v", err)
			}
			return ce.HTTPStatus()
		}
		bound := bubbleOpaque(as, authtest.Claims{Extra: map[string]any{"token_type": "DPoP", "cnf": map[string]any{"jkt": k.thumbprint(t)}}})
		if st := send("DPoP", bound, k.proof(t, proofSpec{htu: bubbleResource, token: bound})); st != http.StatusOK {
			t.Fatalf("introspected bound token with its proof: %d", st)
		}
		if st := send("Bearer", bound, ""); st != http.StatusUnauthorized {
			t.Fatalf("introspected bound token as Bearer: %d, want 401", st)
		}
		if st := send("DPoP", bound, other.proof(t, proofSpec{htu: bubbleResource, token: bound})); st != http.StatusUnauthorized {
			t.Fatalf("introspected bound token with another key's proof: %d, want 401", st)
		}
		unbound := bubbleOpaque(as, authtest.Claims{Extra: map[string]any{"token_type": "DPoP"}})
		if st := send("DPoP", unbound, k.proof(t, proofSpec{htu: bubbleResource, token: unbound})); st != http.StatusUnauthorized {
			t.Fatalf("token_type DPoP without cnf.jkt: %d, want 401", st)
		}
	})
}
