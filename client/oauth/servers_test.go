package oauth_test

// A real OAuth authorization server and a protected MCP server on loopback
// for the tests: RFC 8414 metadata, authorize (PKCE S256, state, iss),
// token (authorization_code, refresh_token with rotation,
// client_credentials, jwt-bearer; client_secret_basic/post, none,
// private_key_jwt verified with the client's public key), RFC 7591
// registration, and an identity provider's RFC 8693 token exchange. The
// resource server is a core.Server behind adapters/nethttp that checks the
// tokens this server issued (audience = resource, scopes per method).

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

type asOptions struct {
	prefix           string   // issuer path, e.g. "/tenant1"
	metadataPath     string   // "" = RFC 8414 path insertion
	metadataIssuer   string   // "" = the real issuer
	iss              string   // "correct" (default), "wrong", "omit", "normalized"
	advertiseIss     *bool    // nil = true
	authMethods      []string // token_endpoint_auth_methods_supported; nil = ["none"]
	scopes           []string // scopes_supported
	grants           []string
	cimd             bool
	noDCR            bool
	noPKCE           bool
	clients          map[string]string // pre-registered id → secret
	clientKey        crypto.PublicKey  // for private_key_jwt: *ecdsa or *rsa
	regMethod        string            // method the registration answers with
	tokenStatus      func(form url.Values) int
	errorOnAuthorize string // error code sent to the redirect
}

type tokenInfo struct {
	scopes   []string
	resource string
	client   string
}

type testAS struct {
	t      *testing.T
	srv    *httptest.Server
	opts   asOptions
	issuer string

	mu         sync.Mutex
	registered map[string]string // id → secret
	regBodies  []map[string]any
	authReqs   []url.Values
	tokenReqs  []url.Values
	tokenAuth  []string // Authorization header of each token request
	metaGets   []string
	codes      map[string]codeInfo
	access     map[string]tokenInfo
	refresh    map[string]tokenInfo
	n          int
}

type codeInfo struct {
	client, challenge, redirect, resource string
	scopes                                []string
}

func newAS(t *testing.T, o asOptions) *testAS {
	a := &testAS{t: t, opts: o, registered: map[string]string{}, codes: map[string]codeInfo{},
		access: map[string]tokenInfo{}, refresh: map[string]tokenInfo{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	a.issuer = a.srv.URL + o.prefix
	return a
}

func (a *testAS) next(prefix string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	return fmt.Sprintf("%s-%s-%d", prefix, a.srv.Listener.Addr().String(), a.n)
}

func (a *testAS) metadataPath() string {
	if a.opts.metadataPath != "" {
		return a.opts.metadataPath
	}
	return "/.well-known/oauth-authorization-server" + a.opts.prefix
}

func (a *testAS) serve(w http.ResponseWriter, r *http.Request) {
	p := a.opts.prefix
	switch {
	case strings.HasPrefix(r.URL.Path, "/.well-known/") || strings.Contains(r.URL.Path, "/.well-known/"):
		a.mu.Lock()
		a.metaGets = append(a.metaGets, r.URL.Path)
		a.mu.Unlock()
		if r.URL.Path != a.metadataPath() {
			http.NotFound(w, r)
			return
		}
		a.metadata(w)
	case r.URL.Path == p+"/authorize":
		a.authorize(w, r)
	case r.URL.Path == p+"/token" && r.Method == http.MethodPost:
		a.token(w, r)
	case r.URL.Path == p+"/register" && r.Method == http.MethodPost && !a.opts.noDCR:
		a.register(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *testAS) metadata(w http.ResponseWriter) {
	base := a.srv.URL + a.opts.prefix
	m := map[string]any{
		"issuer":                   a.issuer,
		"authorization_endpoint":   base + "/authorize",
		"token_endpoint":           base + "/token",
		"response_types_supported": []string{"code"},
	}
	if a.opts.metadataIssuer != "" {
		m["issuer"] = a.opts.metadataIssuer
	}
	if !a.opts.noDCR {
		m["registration_endpoint"] = base + "/register"
	}
	if !a.opts.noPKCE {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if a.opts.advertiseIss == nil || *a.opts.advertiseIss {
		m["authorization_response_iss_parameter_supported"] = true
	}
	methods := a.opts.authMethods
	if methods == nil {
		methods = []string{"none"}
	}
	m["token_endpoint_auth_methods_supported"] = methods
	if a.opts.scopes != nil {
		m["scopes_supported"] = a.opts.scopes
	}
	if a.opts.grants != nil {
		m["grant_types_supported"] = a.opts.grants
	}
	if a.opts.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	writeJSON(w, 200, m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": code + " (test AS)"})
}

func (a *testAS) register(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil {
		oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	id := a.next("client")
	method := a.opts.regMethod
	if method == "" {
		method, _ = body["token_endpoint_auth_method"].(string)
	}
	secret := ""
	if method != "none" {
		secret = a.next("secret")
	}
	a.mu.Lock()
	a.registered[id] = secret
	a.regBodies = append(a.regBodies, body)
	a.mu.Unlock()
	out := map[string]any{"client_id": id, "token_endpoint_auth_method": method, "redirect_uris": body["redirect_uris"]}
	if secret != "" {
		out["client_secret"] = secret
	}
	writeJSON(w, 201, out)
}

func (a *testAS) knownClient(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.registered[id]; ok {
		return true
	}
	if _, ok := a.opts.clients[id]; ok {
		return true
	}
	return a.opts.cimd && strings.HasPrefix(id, "https://")
}

func (a *testAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.authReqs = append(a.authReqs, q)
	a.mu.Unlock()
	if !a.knownClient(q.Get("client_id")) || q.Get("redirect_uri") == "" {
		http.Error(w, "unknown client", 400)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE S256 required", 400)
		return
	}
	red, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	rq := red.Query()
	if a.opts.errorOnAuthorize != "" {
		rq.Set("error", a.opts.errorOnAuthorize)
	} else {
		code := a.next("code")
		a.mu.Lock()
		a.codes[code] = codeInfo{client: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"),
			resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
		a.mu.Unlock()
		rq.Set("code", code)
	}
	if s := q.Get("state"); s != "" {
		rq.Set("state", s)
	}
	switch a.opts.iss {
	case "", "correct":
		rq.Set("iss", a.issuer)
	case "wrong":
		rq.Set("iss", "https://evil.example.com")
	case "normalized":
		rq.Set("iss", a.issuer+"/")
	}
	red.RawQuery = rq.Encode()
	http.Redirect(w, r, red.String(), http.StatusFound)
}

// clientAuth checks the client authentication of a token request and
// returns the client id.
func (a *testAS) clientAuth(r *http.Request, form url.Values) (string, bool) {
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		a.mu.Lock()
		defer a.mu.Unlock()
		want, reg := a.registered[id]
		if !reg {
			want, reg = a.opts.clients[id]
		}
		return id, reg && want != "" && want == secret
	}
	id := form.Get("client_id")
	if form.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		iss, ok := verifyJWT(form.Get("client_assertion"), a.opts.clientKey, a.issuer)
		return iss, ok
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	want, reg := a.registered[id]
	if !reg {
		want, reg = a.opts.clients[id]
	}
	if !reg {
		return id, a.opts.cimd && strings.HasPrefix(id, "https://") && form.Get("client_secret") == ""
	}
	return id, want == form.Get("client_secret")
}

func (a *testAS) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		oauthErr(w, 400, "invalid_request")
		return
	}
	form := r.PostForm
	a.mu.Lock()
	a.tokenReqs = append(a.tokenReqs, form)
	a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
	a.mu.Unlock()
	if a.opts.tokenStatus != nil {
		if st := a.opts.tokenStatus(form); st != 0 {
			if st == 503 {
				w.Header().Set("Retry-After", "7")
				oauthErr(w, st, "temporarily_unavailable")
			} else {
				oauthErr(w, st, "invalid_grant")
			}
			return
		}
	}
	id, ok := a.clientAuth(r, form)
	if !ok {
		oauthErr(w, 401, "invalid_client")
		return
	}
	var info tokenInfo
	switch form.Get("grant_type") {
	case "authorization_code":
		a.mu.Lock()
		c, found := a.codes[form.Get("code")]
		delete(a.codes, form.Get("code"))
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if !found || c.client != id || c.redirect != form.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || c.resource != form.Get("resource") {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		info = tokenInfo{scopes: c.scopes, resource: c.resource, client: id}
	case "refresh_token":
		a.mu.Lock()
		old, found := a.refresh[form.Get("refresh_token")]
		delete(a.refresh, form.Get("refresh_token")) // rotation
		a.mu.Unlock()
		if !found || old.client != id {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		info = old
	case "client_credentials":
		info = tokenInfo{scopes: strings.Fields(form.Get("scope")), resource: form.Get("resource"), client: id}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, ok := decodeJWT(form.Get("assertion"))
		if !ok || claims["aud"] != a.issuer || claims["client_id"] != id {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		res, _ := claims["resource"].(string)
		info = tokenInfo{scopes: strings.Fields(form.Get("scope")), resource: res, client: id}
	default:
		oauthErr(w, 400, "unsupported_grant_type")
		return
	}
	at, rt := a.next("at"), a.next("rt")
	a.mu.Lock()
	a.access[at] = info
	a.refresh[rt] = info
	a.mu.Unlock()
	writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": rt, "scope": strings.Join(info.scopes, " ")})
}

func (a *testAS) lookup(tok string) (tokenInfo, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, ok := a.access[tok]
	return i, ok
}

func (a *testAS) revokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.access = map[string]tokenInfo{}
}

func (a *testAS) snapshot() (auth, tok []url.Values, reg []map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.authReqs...), append([]url.Values(nil), a.tokenReqs...), append([]map[string]any(nil), a.regBodies...)
}

// decodeJWT returns the claims of a JWT without verifying it.
func decodeJWT(s string) (map[string]any, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, false
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m) == nil
}

// verifyJWT verifies a client assertion (ES256 or RS256) and returns its
// iss.
func verifyJWT(s string, pub crypto.PublicKey, aud string) (string, bool) {
	parts := strings.Split(s, ".")
	if pub == nil || len(parts) != 3 {
		return "", false
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var hdr map[string]string
	if json.Unmarshal(hb, &hdr) != nil {
		return "", false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", false
	}
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if hdr["alg"] != "ES256" || len(sig) != 64 || !ecdsa.Verify(k, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return "", false
		}
	case *rsa.PublicKey:
		if hdr["alg"] != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, d[:], sig) != nil {
			return "", false
		}
	default:
		return "", false
	}
	c, ok := decodeJWT(s)
	if !ok || c["aud"] != aud || c["iss"] != c["sub"] {
		return "", false
	}
	iss, _ := c["iss"].(string)
	return iss, iss != ""
}

// testRS is a protected MCP server: PRM at the path-form well-known URL,
// every POST needs a token the current AS issued for this resource, with
// the scopes scopeFor(method) names.
type testRS struct {
	srv       *httptest.Server
	url       string // the MCP endpoint
	mu        sync.Mutex
	as        *testAS
	resource  string   // override of the PRM resource
	scopes    []string // PRM scopes_supported
	scopeFor  func(method string) []string
	challenge bool // put scope= in the 401 challenge
	prmGets   []string
}

func newRS(t *testing.T, as *testAS, mode core.ProtocolMode) *testRS {
	rs := &testRS{as: as}
	srv := core.NewServer(core.Implementation{Name: "protected", Version: "1"}, &core.ServerOptions{Mode: mode})
	core.AddTool(srv, &core.Tool{Name: "write"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "written", nil
	})
	h := nethttp.NewHandler(srv, &nethttp.Options{Middleware: rs.guard})
	mux := http.NewServeMux()
	mux.Handle(nethttp.DefaultPath, h)
	mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.prmGets = append(rs.prmGets, r.URL.Path)
		res, as, scopes := rs.resource, rs.as, rs.scopes
		rs.mu.Unlock()
		if r.URL.Path != "/.well-known/oauth-protected-resource"+nethttp.DefaultPath {
			http.NotFound(w, r)
			return
		}
		if res == "" {
			res = rs.url
		}
		m := map[string]any{"resource": res, "authorization_servers": []string{as.issuer}}
		if scopes != nil {
			m["scopes_supported"] = scopes
		}
		writeJSON(w, 200, m)
	})
	rs.srv = httptest.NewServer(mux)
	t.Cleanup(rs.srv.Close)
	rs.url = rs.srv.URL + nethttp.DefaultPath
	return rs
}

func (rs *testRS) setAS(as *testAS) {
	rs.mu.Lock()
	rs.as = as
	rs.mu.Unlock()
}

func (rs *testRS) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &msg)
		rs.mu.Lock()
		as, scopeFor, withScope := rs.as, rs.scopeFor, rs.challenge
		rs.mu.Unlock()
		var need []string
		if scopeFor != nil {
			need = scopeFor(msg.Method)
		}
		prm := rs.srv.URL + "/.well-known/oauth-protected-resource" + nethttp.DefaultPath
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		info, ok := as.lookup(tok)
		if !ok || info.resource != rs.url {
			ch := `Bearer resource_metadata="` + prm + `"`
			if withScope && len(need) > 0 {
				ch += `, scope="` + strings.Join(need, " ") + `"`
			}
			w.Header().Set("WWW-Authenticate", ch)
			w.WriteHeader(401)
			return
		}
		for _, s := range need {
			if !contains(info.scopes, s) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(need, " ")+`", resource_metadata="`+prm+`"`)
				w.WriteHeader(403)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// newIdP is an identity provider's token endpoint doing the RFC 8693
// exchange of an ID token for an ID-JAG (unsigned: the test AS only reads
// its claims).
func newIdP(t *testing.T, n interface{ Add(int32) int32 }) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		if r.URL.Path != "/token" || f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
			f.Get("subject_token") != "the-id-token" || f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
			f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" || f.Get("audience") == "" || f.Get("resource") == "" {
			oauthErr(w, 400, "invalid_request")
			return
		}
		n.Add(1)
		claims, _ := json.Marshal(map[string]any{"aud": f.Get("audience"), "resource": f.Get("resource"), "client_id": "xaa", "sub": "user"})
		jag := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"oauth-id-jag+jwt"}`)) + "." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
		writeJSON(w, 200, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	}))
	t.Cleanup(srv.Close)
	return srv
}
