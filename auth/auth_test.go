package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

// want is the expected answer of one case.
type want struct {
	status int
	error  string // the challenge's error; "" means none, "-" means no challenge
	scope  string // the challenge's scope
	code   int    // JSON-RPC error code; 0 for a result
	text   string // the tool's text for a 200
}

func check(t *testing.T, e *env, r *reply, w want) {
	t.Helper()
	if r.status != w.status {
		t.Fatalf("status %d, want %d; headers %v body %s", r.status, w.status, r.header, r.body)
	}
	if w.status == http.StatusOK {
		if r.errCode() != w.code {
			t.Fatalf("error code %d, want %d: %s", r.errCode(), w.code, r.body)
		}
		if w.text != "" && r.text() != w.text {
			t.Fatalf("text %q, want %q: %s", r.text(), w.text, r.body)
		}
		if len(r.header.Values("WWW-Authenticate")) != 0 {
			t.Fatalf("challenge on success: %v", r.header)
		}
		return
	}
	if w.error != "-" {
		ch := r.challenge(t)
		if ch["resource_metadata"] != e.rs.MetadataURL() {
			t.Errorf("resource_metadata %q, want %q", ch["resource_metadata"], e.rs.MetadataURL())
		}
		if ch["error"] != w.error {
			t.Errorf("error %q, want %q (challenge %v)", ch["error"], w.error, ch)
		}
		if ch["scope"] != w.scope {
			t.Errorf("scope %q, want %q", ch["scope"], w.scope)
		}
		if w.error != "" && ch["error_description"] == "" {
			t.Errorf("no error_description in %v", ch)
		}
	}
	if r.errCode() != w.code {
		t.Errorf("JSON-RPC code %d, want %d: %s", r.errCode(), w.code, r.body)
	}
	if r.msg["jsonrpc"] != "2.0" {
		t.Errorf("body is not a JSON-RPC message: %s", r.body)
	}
}

func TestJWTRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.Audiences = []string{"api://mcp"}
	}})
	now := time.Now()
	aud := []string{e.resource}
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	mint := func(c authtest.Claims) string {
		if c.Audience == nil {
			c.Audience = aud
		}
		if c.Scope == "" {
			c.Scope = "mcp"
		}
		return e.as.Mint(c)
	}
	mintWith := func(c authtest.Claims, o authtest.MintOptions) string {
		if c.Audience == nil {
			c.Audience = aud
		}
		if c.Scope == "" {
			c.Scope = "mcp"
		}
		return e.as.MintWith(c, o)
	}
	ok := want{status: 200, text: "hello user-1 via client-1"}
	invalid := want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest}
	cases := []struct {
		name string
		tok  string
		q    rpc
		want want
	}{
		{"no token", "", call("echo"), want{status: 401, scope: "mcp", code: core.CodeInvalidRequest}},
		{"RS256", mint(authtest.Claims{}), call("echo"), ok},
		{"ES256", mintWith(authtest.Claims{}, authtest.MintOptions{Alg: "ES256"}), call("echo"), ok},
		{"configured audience", mint(authtest.Claims{Audience: []string{"api://mcp"}}), call("echo"), ok},
		{"audience list", mint(authtest.Claims{Audience: []string{"other", e.resource}}), call("echo"), ok},
		{"typ application/at+jwt", mintWith(authtest.Claims{}, authtest.MintOptions{Typ: "application/AT+JWT"}), call("echo"), ok},
		{"expired", mint(authtest.Claims{Expiry: now.Add(-2 * time.Minute)}), call("echo"), invalid},
		{"expired within skew", mint(authtest.Claims{Expiry: now.Add(-30 * time.Second)}), call("echo"), ok},
		{"no exp", mint(authtest.Claims{NoExpiry: true}), call("echo"), invalid},
		{"nbf ahead", mint(authtest.Claims{NotBefore: now.Add(5 * time.Minute)}), call("echo"), invalid},
		{"nbf within skew", mint(authtest.Claims{NotBefore: now.Add(30 * time.Second)}), call("echo"), ok},
		{"iat ahead", mint(authtest.Claims{IssuedAt: now.Add(5 * time.Minute)}), call("echo"), invalid},
		{"wrong audience", mint(authtest.Claims{Audience: []string{"https://other.example/mcp"}}), call("echo"), invalid},
		{"no audience", mint(authtest.Claims{Audience: []string{}}), call("echo"), invalid},
		{"unknown issuer", mint(authtest.Claims{Issuer: "https://evil.example"}), call("echo"), invalid},
		{"typ JWT", mintWith(authtest.Claims{}, authtest.MintOptions{Typ: "JWT"}), call("echo"), invalid},
		{"no typ", mintWith(authtest.Claims{}, authtest.MintOptions{Typ: "-"}), call("echo"), invalid},
		{"unknown kid", mintWith(authtest.Claims{}, authtest.MintOptions{Kid: "nope", Key: otherRSA}), call("echo"), invalid},
		{"known kid, wrong key", mintWith(authtest.Claims{}, authtest.MintOptions{Key: otherRSA}), call("echo"), invalid},
		{"HS256 with the public key", hsWithPublicKey(t, e), call("echo"), invalid},
		{"alg none", algNone(e), call("echo"), invalid},
		{"ES256 header on the RSA kid", esOnRSAKid(t, e), call("echo"), invalid},
		{"crit header", mintWith(authtest.Claims{}, authtest.MintOptions{Header: map[string]any{"crit": []string{"exp"}, "exp": 1}}), call("echo"), invalid},
		{"scope array claim", mint(authtest.Claims{Extra: map[string]any{"scope": []string{"mcp"}}}), call("echo"), ok},
		{"opaque token without introspection", "opaque-token", call("echo"), invalid},
		{"not base64", "a.b.c", call("echo"), invalid},
		{"huge token", strings.Repeat("a", 20000), call("echo"), invalid},
		{"malformed header", "", rpc{method: "tools/call", params: call("echo").params, header: map[string][]string{"Authorization": {"Bearer a b"}}},
			want{status: 400, error: "invalid_request", code: core.CodeInvalidRequest}},
		{"empty bearer", "", rpc{method: "tools/call", params: call("echo").params, header: map[string][]string{"Authorization": {"Bearer"}}},
			want{status: 400, error: "invalid_request", code: core.CodeInvalidRequest}},
		{"repeated header", "", rpc{method: "tools/call", params: call("echo").params, header: map[string][]string{"Authorization": {"Bearer x", "Bearer y"}}},
			want{status: 400, error: "invalid_request", code: core.CodeInvalidRequest}},
		{"token in query", "", rpc{method: "tools/call", params: call("echo").params, query: "access_token=abc"},
			want{status: 400, error: "invalid_request", code: core.CodeInvalidRequest}},
		{"other scheme", "", rpc{method: "tools/call", params: call("echo").params, header: map[string][]string{"Authorization": {"Basic dXNlcjpwYXNz"}}},
			want{status: 401, scope: "mcp", code: core.CodeInvalidRequest}},
		{"missing required scope", mint(authtest.Claims{Scope: "files:write"}), call("echo"),
			want{status: 403, error: "insufficient_scope", scope: "mcp", code: core.CodeInvalidRequest}},
		{"tool scope missing", mint(authtest.Claims{}), call("write"),
			want{status: 403, error: "insufficient_scope", scope: "mcp files:write", code: core.CodeInvalidRequest}},
		{"tool scope granted", mint(authtest.Claims{Scope: "mcp files:write"}), call("write"), want{status: 200, text: "written"}},
		{"tool scope implied transitively", mint(authtest.Claims{Scope: "mcp files:admin"}), call("write"), want{status: 200, text: "written"}},
		{"narrower scope does not imply broader", mint(authtest.Claims{Scope: "mcp files:read"}), call("write"),
			want{status: 403, error: "insufficient_scope", scope: "mcp files:write", code: core.CodeInvalidRequest}},
		{"run-time step-up needed", mint(authtest.Claims{}), call("stepup"),
			want{status: 403, error: "insufficient_scope", scope: "mcp admin", code: core.CodeInvalidRequest}},
		{"run-time step-up granted", mint(authtest.Claims{Scope: "mcp admin"}), call("stepup"), want{status: 200, text: "admin done"}},
		{"tools/list needs only Required", mint(authtest.Claims{}), rpc{method: "tools/list"}, want{status: 200}},
		{"unknown tool before authorization", mint(authtest.Claims{}), call("nope"), want{status: 200, code: core.CodeInvalidParams}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, e, e.do(t, c.tok, c.q), c.want)
		})
	}
	t.Run("list hides nothing about scopes", func(t *testing.T) {
		r := e.do(t, mint(authtest.Claims{}), rpc{method: "tools/list"})
		if strings.Contains(string(r.body), "files:write") {
			t.Fatalf("tools/list shows scopes: %s", r.body)
		}
	})
}

// hsWithPublicKey signs HS256 with the RSA public key's DER bytes as the
// HMAC secret: the classic algorithm confusion attack.
func hsWithPublicKey(t *testing.T, e *env) string {
	rsaKid, _ := e.as.Kids()
	resp, err := http.Get(e.as.Issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	json.NewDecoder(resp.Body).Decode(&set)
	var n string
	for _, k := range set.Keys {
		if k["kid"] == rsaKid {
			n, _ = k["n"].(string)
		}
	}
	return e.as.MintWith(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"},
		authtest.MintOptions{Alg: "HS256", Kid: rsaKid, Key: []byte(n)})
}

// algNone builds an unsigned token with alg "none".
func algNone(e *env) string {
	tok := e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"})
	parts := strings.Split(tok, ".")
	return "eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0." + parts[1] + "."
}

// esOnRSAKid signs ES256 with an unpublished EC key under the RSA key's kid.
func esOnRSAKid(t *testing.T, e *env) string {
	rsaKid, _ := e.as.Kids()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return e.as.MintWith(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"},
		authtest.MintOptions{Alg: "ES256", Kid: rsaKid, Key: k})
}

func TestRotationAndUnknownKid(t *testing.T) {
	t.Parallel()
	bubbleEnv(t, envConfig{}, func(t *testing.T, e *env) {
		ok := want{status: 200, text: "hello user-1 via client-1"}
		check(t, e, e.do(t, e.token("mcp"), call("echo")), ok)
		fetches := e.as.JWKSFetches()
		if fetches != 1 {
			t.Fatalf("JWKS fetched %d times, want 1", fetches)
		}
		// A cached key serves further tokens without fetching.
		check(t, e, e.do(t, e.token("mcp"), call("echo")), ok)
		if n := e.as.JWKSFetches(); n != 1 {
			t.Fatalf("JWKS fetched %d times with a warm cache", n)
		}
		// Rotation within the minimum interval: the new kid is unknown and the
		// set is not refetched yet.
		e.as.Rotate()
		newTok := e.token("mcp")
		time.Sleep(10 * time.Second)
		check(t, e, e.do(t, newTok, call("echo")), want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest})
		if n := e.as.JWKSFetches(); n != 1 {
			t.Fatalf("unknown kid refetched within the interval: %d fetches", n)
		}
		// After the interval, one refetch finds it; tokens of the previous key
		// still verify (it stays published).
		time.Sleep(auth.DefaultJWKSMinInterval + time.Second)
		check(t, e, e.do(t, newTok, call("echo")), ok)
		check(t, e, e.do(t, e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"}), call("echo")), ok)
		if n := e.as.JWKSFetches(); n != 2 {
			t.Fatalf("JWKS fetched %d times, want 2", n)
		}
		// A flood of unknown kids costs at most one fetch per interval.
		other, _ := rsa.GenerateKey(rand.Reader, 2048)
		for i := 0; i < 20; i++ {
			tok := e.as.MintWith(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"}, authtest.MintOptions{Kid: "k" + string(rune('a'+i)), Key: other})
			e.do(t, tok, call("echo"))
		}
		if n := e.as.JWKSFetches(); n > 3 {
			t.Fatalf("unknown kids caused %d fetches", n)
		}
		// The TTL makes the next request refetch.
		time.Sleep(auth.DefaultJWKSTTL + time.Hour)
		before := e.as.JWKSFetches()
		check(t, e, e.do(t, e.token("mcp"), call("echo")), ok)
		if n := e.as.JWKSFetches(); n != before+1 {
			t.Fatalf("stale JWKS: %d fetches, want %d", n, before+1)
		}
	})
}

func TestJWKSOutageIs503(t *testing.T) {
	t.Parallel()
	bubbleEnv(t, envConfig{}, func(t *testing.T, e *env) {
		e.as.SetJWKSDown(true)
		r := e.do(t, e.token("mcp"), call("echo"))
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("status %d, Retry-After %q; want 503 with Retry-After", r.status, r.header.Get("Retry-After"))
		}
		if strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("an outage answered invalid_token: %v", r.header)
		}
		if r.errCode() != core.CodeInternalError {
			t.Fatalf("code %d: %s", r.errCode(), r.body)
		}
		// Recovered (after the retry interval): the keys are fetched again.
		e.as.SetJWKSDown(false)
		time.Sleep(auth.DefaultJWKSMinInterval + time.Second)
		check(t, e, e.do(t, e.token("mcp"), call("echo")), want{status: 200, text: "hello user-1 via client-1"})
		// Stale keys keep serving while the issuer is down again.
		e.as.SetJWKSDown(true)
		time.Sleep(auth.DefaultJWKSTTL + time.Hour)
		check(t, e, e.do(t, e.token("mcp"), call("echo")), want{status: 200, text: "hello user-1 via client-1"})
	})
}

func TestDiscoveryFromIssuerMetadata(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{IssuerPath: "/tenant1"})
	t.Cleanup(as.Close)
	e := newEnv(t, envConfig{as: as})
	check(t, e, e.do(t, e.token("mcp"), call("echo")), want{status: 200, text: "hello user-1 via client-1"})
}

func TestMetadataDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{})
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp"} {
		req, _ := http.NewRequest(http.MethodGet, e.origin+path, nil)
		req.Header.Set("Origin", "https://foreign.example") // public: no Origin check
		r := e.send(t, req)
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET %s: %d %v", path, r.status, r.header)
		}
		var doc map[string]any
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc["resource"] != e.resource {
			t.Errorf("resource %v, want %s", doc["resource"], e.resource)
		}
		if as, _ := doc["authorization_servers"].([]any); len(as) != 1 || as[0] != e.as.Issuer {
			t.Errorf("authorization_servers %v", doc["authorization_servers"])
		}
		if sc, _ := doc["scopes_supported"].([]any); len(sc) != 2 || sc[0] != "mcp" || sc[1] != "files:write" {
			t.Errorf("scopes_supported %v", doc["scopes_supported"])
		}
		if bm, _ := doc["bearer_methods_supported"].([]any); len(bm) != 1 || bm[0] != "header" {
			t.Errorf("bearer_methods_supported %v", doc["bearer_methods_supported"])
		}
	}
	// The challenge names the document's URL.
	if got, want := e.rs.MetadataURL(), e.origin+"/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Fatalf("MetadataURL %q, want %q", got, want)
	}
	// Another document under the prefix: 404, not the MCP endpoint's 401.
	r := e.send(t, mustReq(http.MethodGet, e.origin+"/.well-known/oauth-protected-resource/other"))
	if r.status != http.StatusNotFound {
		t.Fatalf("unknown metadata path: %d", r.status)
	}
}

func mustReq(method, url string) *http.Request {
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return r
}

func TestMetadataURLAndVirtualHosts(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	t.Cleanup(as.Close)
	rs, err := auth.New(&auth.Options{
		Resource:    "https://abc.execute-api.example.com/prod/mcp",
		MetadataURL: "https://abc.execute-api.example.com/prod/.well-known/oauth-protected-resource/mcp",
		Issuers:     []auth.Issuer{{Issuer: as.Issuer}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The handler sees the path without the stage prefix? No: API Gateway
	// v2 passes it with the stage; both paths serve the document.
	for _, p := range []string{"/.well-known/oauth-protected-resource/prod/mcp", "/prod/.well-known/oauth-protected-resource/mcp"} {
		req := httptestRequest(http.MethodGet, "https://abc.execute-api.example.com"+p)
		doc, err := rs.Metadata(req)
		if err != nil || !strings.Contains(string(doc), `"resource":"https://abc.execute-api.example.com/prod/mcp"`) {
			t.Fatalf("%s: %s %v", p, doc, err)
		}
	}
	if rs.MetadataURL() != "https://abc.execute-api.example.com/prod/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("challenge URL %q", rs.MetadataURL())
	}

	vh, err := auth.New(&auth.Options{
		Resources: []string{"https://a.example.com/mcp", "https://b.example.com/mcp"},
		Issuers:   []auth.Issuer{{Issuer: as.Issuer}},
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := vh.Metadata(httptestRequest(http.MethodGet, "https://b.example.com/.well-known/oauth-protected-resource/mcp"))
	if err != nil || !strings.Contains(string(doc), `"resource":"https://b.example.com/mcp"`) {
		t.Fatalf("virtual host b: %s %v", doc, err)
	}
	_, err = vh.Metadata(httptestRequest(http.MethodGet, "https://c.example.com/.well-known/oauth-protected-resource/mcp"))
	var ce *core.Error
	if !errors.As(err, &ce) || ce.HTTPStatus() != http.StatusMisdirectedRequest {
		t.Fatalf("unlisted host: %v", err)
	}
	_, err = vh.Authenticate(httptestRequest(http.MethodPost, "https://c.example.com/mcp"))
	if !errors.As(err, &ce) || ce.HTTPStatus() != http.StatusMisdirectedRequest {
		t.Fatalf("unlisted host authenticate: %v", err)
	}
}

func httptestRequest(method, u string) *http.Request {
	r, _ := http.NewRequest(method, u, nil)
	r.Host = r.URL.Host
	r.RequestURI = r.URL.RequestURI()
	return r
}

func TestConstructionErrors(t *testing.T) {
	t.Parallel()
	iss := []auth.Issuer{{Issuer: "https://as.example.com"}}
	intro := &auth.Introspection{Endpoint: "https://as.example.com/introspect", ClientID: "a", ClientSecret: "b"}
	cases := map[string]auth.Options{
		"no resource":           {Issuers: iss},
		"http resource":         {Resource: "http://mcp.example.com/mcp", Issuers: iss},
		"fragment":              {Resource: "https://mcp.example.com/mcp#x", Issuers: iss},
		"upper-case host":       {Resource: "https://MCP.example.com/mcp", Issuers: iss},
		"relative":              {Resource: "/mcp", Issuers: iss},
		"no issuer":             {Resource: "https://mcp.example.com/mcp"},
		"http issuer":           {Resource: "https://mcp.example.com/mcp", Issuers: []auth.Issuer{{Issuer: "http://as.example.com"}}},
		"duplicate issuer":      {Resource: "https://mcp.example.com/mcp", Issuers: append(iss, iss...)},
		"two introspectors":     {Resource: "https://mcp.example.com/mcp", Issuers: []auth.Issuer{{Issuer: "https://a.example.com", Introspection: intro}, {Issuer: "https://b.example.com", Introspection: intro}}},
		"introspection secret":  {Resource: "https://mcp.example.com/mcp", Issuers: []auth.Issuer{{Issuer: "https://a.example.com", Introspection: &auth.Introspection{Endpoint: "https://a.example.com/i"}}}},
		"offline_access":        {Resource: "https://mcp.example.com/mcp", Issuers: iss, Required: []string{"offline_access"}},
		"scope with space":      {Resource: "https://mcp.example.com/mcp", Issuers: iss, ToolScopes: map[string][]string{"t": {"a b"}}},
		"scope with quote":      {Resource: "https://mcp.example.com/mcp", Issuers: iss, Required: []string{`a"b`}},
		"empty scope":           {Resource: "https://mcp.example.com/mcp", Issuers: iss, PromptScopes: map[string][]string{"p": {""}}},
		"offline in implies":    {Resource: "https://mcp.example.com/mcp", Issuers: iss, Implies: map[string][]string{"a": {"offline_access"}}},
		"offline supported":     {Resource: "https://mcp.example.com/mcp", Issuers: iss, ScopesSupported: []string{"offline_access"}},
		"metadata URL, 2 hosts": {Resources: []string{"https://a.example.com/mcp", "https://b.example.com/mcp"}, MetadataURL: "https://a.example.com/x", Issuers: iss},
		"same host twice":       {Resources: []string{"https://a.example.com/mcp", "https://a.example.com/other"}, Issuers: iss},
		"negative leeway":       {Resource: "https://mcp.example.com/mcp", Issuers: iss, Leeway: -time.Second},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := auth.New(&o); err == nil {
				t.Fatal("New accepted bad configuration")
			}
		})
	}
	if _, err := auth.New(nil); err == nil {
		t.Error("New accepted nil Options")
	}
	if _, err := auth.New(&auth.Options{Resource: "http://127.0.0.1:8080/mcp", Issuers: []auth.Issuer{{Issuer: "http://localhost:9000"}}}); err != nil {
		t.Fatalf("loopback http refused: %v", err)
	}
}

func TestTokenRedaction(t *testing.T) {
	t.Parallel()
	ti := &auth.TokenInfo{Issuer: "https://as", Subject: "u", Token: "secret-token-value"}
	var b strings.Builder
	for _, s := range []string{ti.Token.String(), ti.Token.LogValue().String(), ti.LogValue().String()} {
		b.WriteString(s)
	}
	if strings.Contains(b.String(), "secret-token-value") {
		t.Fatalf("token leaked: %s", b.String())
	}
}

// TestJWTCache: a verified JWT is remembered, and its time checks still run
// on every request, through 20 tokens beyond a cache of 4.
func TestJWTCache(t *testing.T) {
	t.Parallel()
	bubbleEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) { o.JWTCacheSize = 4 }}, func(t *testing.T, e *env) {
		tok := e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp", Expiry: time.Now().Add(2 * time.Minute)})
		ok := want{status: 200, text: "hello user-1 via client-1"}
		check(t, e, e.do(t, tok, call("echo")), ok)
		check(t, e, e.do(t, tok, call("echo")), ok)
		time.Sleep(2*time.Minute + auth.DefaultLeeway + time.Second)
		check(t, e, e.do(t, tok, call("echo")), want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest})
		for i := 0; i < 20; i++ {
			check(t, e, e.do(t, e.token("mcp"), call("echo")), ok)
		}
		// The bound itself (at most 4 entries, the cache in use) is not
		// visible on the wire: package auth's TestJWTCacheBound checks it.
		// Another audience is refused even when the token is cached for one
		// resource of a virtual-host pair: the audience check is not cached.
		wrong := e.as.Mint(authtest.Claims{Audience: []string{"https://other.example/mcp"}, Scope: "mcp"})
		for i := 0; i < 2; i++ {
			check(t, e, e.do(t, wrong, call("echo")), want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest})
		}
	})
}

// TestClaimNames: an issuer whose tokens carry scp (an array) and azp.
func TestClaimNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.Issuers[0].ScopeClaim, o.Issuers[0].ClientClaim = "scp", "azp"
	}})
	tok := e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Extra: map[string]any{
		"scp": []string{"mcp", "files:write"}, "azp": "spa-client", "client_id": nil}})
	check(t, e, e.do(t, tok, call("echo")), want{status: 200, text: "hello user-1 via spa-client"})
	check(t, e, e.do(t, tok, call("write")), want{status: 200, text: "written"})
	// The default names are not read for this issuer.
	tok = e.as.Mint(authtest.Claims{Audience: []string{e.resource}, Scope: "mcp"})
	check(t, e, e.do(t, tok, call("echo")), want{status: 403, error: "insufficient_scope", scope: "mcp", code: core.CodeInvalidRequest})
}

// TestIssuerAudiences checks that an Issuer's Audiences are accepted for
// that issuer's tokens only, beside the resource URI, and that New refuses
// an empty one.
func TestIssuerAudiences(t *testing.T) {
	t.Parallel()
	as2 := authtest.New(nil)
	t.Cleanup(as2.Close)
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.Issuers[0].Audiences = []string{"api://one"}
		o.Issuers = append(o.Issuers, auth.Issuer{Issuer: as2.Issuer, Audiences: []string{"api://two"}})
	}})
	mint := func(as *authtest.Server, aud string) string {
		return as.Mint(authtest.Claims{Audience: []string{aud}, Scope: "mcp"})
	}
	ok := want{status: 200, text: "hello user-1 via client-1"}
	invalid := want{status: 401, error: "invalid_token", scope: "mcp", code: core.CodeInvalidRequest}
	for _, c := range []struct {
		name string
		tok  string
		want want
	}{
		{"first issuer, its audience", mint(e.as, "api://one"), ok},
		{"second issuer, its audience", mint(as2, "api://two"), ok},
		{"second issuer, the resource", mint(as2, e.resource), ok},
		{"first issuer, the other's audience", mint(e.as, "api://two"), invalid},
		{"second issuer, the other's audience", mint(as2, "api://one"), invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, e, e.do(t, c.tok, call("echo")), c.want)
		})
	}
	_, err := auth.New(&auth.Options{Resource: "https://mcp.example.com/mcp",
		Issuers: []auth.Issuer{{Issuer: "https://as.example.com", Audiences: []string{""}}}})
	if err == nil || !strings.Contains(err.Error(), "empty audience") {
		t.Fatalf("New with an empty issuer audience: %v", err)
	}
}
