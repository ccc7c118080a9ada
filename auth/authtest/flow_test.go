package authtest_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpfn/mcpfn/auth/authtest"
)

// clientAssertion signs a private_key_jwt assertion (RFC 7523 §3) for id.
func clientAssertion(t *testing.T, key *ecdsa.PrivateKey, id, aud string, exp time.Time) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"iss": id, "sub": id, "aud": aud, "exp": exp.Unix(), "jti": "j1"})
	sig, err := jws.Sign(b, jws.WithKey(jwa.ES256, key))
	if err != nil {
		t.Fatal(err)
	}
	return string(sig)
}

// TestClientAuthentication: the token endpoint authenticates each client
// with the method it was registered with, and only with that.
func TestClientAuthentication(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{AuthMethods: []string{"client_secret_basic", "client_secret_post", "private_key_jwt", "none"}})
	defer as.Close()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as.AddClient(authtest.Client{ID: "basic", Secret: "pw"})
	as.AddClient(authtest.Client{ID: "post", Secret: "pw", AuthMethod: "client_secret_post"})
	as.AddClient(authtest.Client{ID: "jwt", Key: &key.PublicKey})
	as.AddClient(authtest.Client{ID: "public"})
	cc := func(extra url.Values) url.Values {
		f := url.Values{"grant_type": {"client_credentials"}, "scope": {"a"}, "resource": {"https://mcp.example.com/mcp"}}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	assertion := func(k *ecdsa.PrivateKey, id, aud string, exp time.Time) url.Values {
		return url.Values{"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion": {clientAssertion(t, k, id, aud, exp)}}
	}
	soon := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name       string
		form       url.Values
		user, pass string
		want       int
	}{
		{"basic", cc(nil), "basic", "pw", 200},
		{"basic, wrong secret", cc(nil), "basic", "nope", 401},
		{"basic sent as post", cc(url.Values{"client_id": {"basic"}, "client_secret": {"pw"}}), "", "", 401},
		{"post", cc(url.Values{"client_id": {"post"}, "client_secret": {"pw"}}), "", "", 200},
		{"post sent as basic", cc(nil), "post", "pw", 401},
		{"private_key_jwt", cc(assertion(key, "jwt", as.Issuer, soon)), "", "", 200},
		{"private_key_jwt, token endpoint as aud", cc(assertion(key, "jwt", as.Issuer+"/token", soon)), "", "", 200},
		{"private_key_jwt, another key", cc(assertion(other, "jwt", as.Issuer, soon)), "", "", 401},
		{"private_key_jwt, another audience", cc(assertion(key, "jwt", "https://other.example", soon)), "", "", 401},
		{"private_key_jwt, expired", cc(assertion(key, "jwt", as.Issuer, time.Now().Add(-time.Minute))), "", "", 401},
		{"private_key_jwt, other client_id", cc(url.Values{"client_id": {"basic"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion": {clientAssertion(t, key, "jwt", as.Issuer, soon)}}), "", "", 401},
		{"public: no client_credentials", cc(url.Values{"client_id": {"public"}}), "", "", 400},
		{"public with a secret", cc(url.Values{"client_id": {"public"}, "client_secret": {"x"}}), "", "", 401},
		{"unknown", cc(url.Values{"client_id": {"nobody"}}), "", "", 401},
	} {
		st, tok := postForm(t, as.Issuer+"/token", tc.form, tc.user, tc.pass)
		if st != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, st, tok, tc.want)
			continue
		}
		if st == 200 && (tok["access_token"] == nil || tok["refresh_token"] != nil || tok["scope"] != "a") {
			t.Errorf("%s: %v; want an access token for scope a and no refresh token (RFC 6749 §4.4.3)", tc.name, tok)
		}
	}
	reqs := as.Requests(authtest.EndpointToken)
	if len(reqs) != 14 || !strings.HasPrefix(reqs[0].Authorization, "Basic ") || reqs[3].Form.Get("client_secret") != "pw" {
		t.Fatalf("%d token requests recorded: %+v", len(reqs), reqs)
	}
}

// TestRegistrationMethods: /register grants the method asked for when it
// is supported (a secret with it unless none), client_secret_basic when
// none is asked (RFC 7591 §2), and the first supported one otherwise.
func TestRegistrationMethods(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{AuthMethods: []string{"client_secret_post", "none"}})
	defer as.Close()
	register := func(method string) map[string]any {
		body := map[string]any{"redirect_uris": []string{"http://127.0.0.1:1/cb"}, "application_type": "native"}
		if method != "" {
			body["token_endpoint_auth_method"] = method
		}
		b, _ := json.Marshal(body)
		res, err := http.Post(as.Issuer+"/register", "application/json", strings.NewReader(string(b)))
		var out map[string]any
		readJSON(t, res, err, &out)
		if res.StatusCode != 201 {
			t.Fatalf("register %q: %d %v", method, res.StatusCode, out)
		}
		return out
	}
	for method, want := range map[string]string{"none": "none", "client_secret_post": "client_secret_post", "": "client_secret_post",
		"client_secret_basic": "client_secret_post", "private_key_jwt": "client_secret_post"} {
		out := register(method)
		if out["token_endpoint_auth_method"] != want || (out["client_secret"] != nil) != (want != "none") {
			t.Errorf("asked %q: %v, want %s", method, out, want)
		}
	}
	reg := as.Requests(authtest.EndpointRegistration)
	if len(reg) != 5 || reg[0].JSON["application_type"] != "native" || reg[0].JSON["client_id"] != nil {
		t.Fatalf("registrations recorded: %+v", reg)
	}
	md := metadata(t, as.URL+"/.well-known/oauth-authorization-server")
	if methods, _ := md["token_endpoint_auth_methods_supported"].([]any); !slices.Equal(methods, []any{"client_secret_post", "none"}) {
		t.Fatalf("metadata methods %v", md["token_endpoint_auth_methods_supported"])
	}
}

func metadata(t *testing.T, u string) map[string]any {
	t.Helper()
	res, err := http.Get(u)
	var md map[string]any
	readJSON(t, res, err, &md)
	if res.StatusCode != 200 {
		return nil
	}
	return md
}

// TestMetadataControls: MetadataPath serves one form (the other well-known
// paths are 404 and listed), Metadata replaces and removes members, Iss and
// AuthorizeError shape the authorization response, TokenError the token
// endpoint's.
func TestMetadataControls(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{IssuerPath: "/t1", MetadataPath: "/t1/.well-known/openid-configuration",
		Metadata:       map[string]any{"authorization_response_iss_parameter_supported": nil, "issuer": "https://attacker.example"},
		Iss:            func(issuer string) string { return issuer + "/" },
		AuthorizeError: "access_denied",
		TokenError: func(f url.Values) *authtest.TokenError {
			return &authtest.TokenError{Status: 503, Code: "temporarily_unavailable", RetryAfter: 7}
		},
	})
	defer as.Close()
	if md := metadata(t, as.URL+"/.well-known/oauth-authorization-server/t1"); md != nil {
		t.Fatalf("RFC 8414 form served: %v", md)
	}
	md := metadata(t, as.Issuer+"/.well-known/openid-configuration")
	if _, has := md["authorization_response_iss_parameter_supported"]; has || md["issuer"] != "https://attacker.example" || md["token_endpoint"] != as.Issuer+"/token" {
		t.Fatalf("metadata %v", md)
	}
	var paths []string
	for _, r := range as.Requests(authtest.EndpointMetadata) {
		paths = append(paths, r.Path)
	}
	if !slices.Equal(paths, []string{"/.well-known/oauth-authorization-server/t1", "/t1/.well-known/openid-configuration"}) {
		t.Fatalf("metadata requests %v", paths)
	}

	client := as.RegisterClient("http://127.0.0.1:1/cb")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(as.Issuer + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"http://127.0.0.1:1/cb"},
		"state": {"s"}, "code_challenge": {"x"}, "code_challenge_method": {"S256"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if q := loc.Query(); q.Get("error") != "access_denied" || q.Get("iss") != as.Issuer+"/" || q.Get("state") != "s" || q.Get("code") != "" {
		t.Fatalf("authorization response %v", q)
	}
	if a := as.Requests(authtest.EndpointAuthorization); len(a) != 1 || a[0].Form.Get("client_id") != client {
		t.Fatalf("authorization requests %+v", a)
	}

	req, _ := http.NewRequest(http.MethodPost, as.Issuer+"/token", strings.NewReader("grant_type=refresh_token&refresh_token=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = http.DefaultClient.Do(req)
	var e map[string]any
	readJSON(t, res, err, &e)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "7" || e["error"] != "temporarily_unavailable" {
		t.Fatalf("TokenError: %d %v %v", res.StatusCode, res.Header, e)
	}
}

// TestClientIDMetadataDocument: a URL client_id is fetched; its document
// must name that URL and lists the redirect URIs; without the option, or
// with a document for another id, the client is unknown.
func TestClientIDMetadataDocument(t *testing.T) {
	t.Parallel()
	var docURL string
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := docURL
		if r.URL.Path == "/other.json" {
			id = "https://someone.else/client.json"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": []string{"http://127.0.0.1:1/cb"}, "token_endpoint_auth_method": "none"})
	}))
	defer docs.Close()
	docURL = docs.URL + "/client.json"
	as := authtest.New(&authtest.Options{ClientIDMetadataDocuments: true})
	defer as.Close()
	plain := authtest.New(nil)
	defer plain.Close()
	if md := metadata(t, as.URL+"/.well-known/oauth-authorization-server"); md["client_id_metadata_document_supported"] != true {
		t.Fatalf("metadata %v", md)
	}
	if md := metadata(t, plain.URL+"/.well-known/oauth-authorization-server"); md["client_id_metadata_document_supported"] != nil {
		t.Fatalf("metadata without the option %v", md)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := "a-verifier-that-is-long-enough-0123456789abcdef"
	authorize := func(as *authtest.Server, id, redirect string) (int, url.Values) {
		sum := sha256Sum(verifier)
		res, err := noFollow.Get(as.Issuer + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {redirect},
			"code_challenge": {sum}, "code_challenge_method": {"S256"}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc, _ := url.Parse(res.Header.Get("Location"))
		return res.StatusCode, loc.Query()
	}
	st, back := authorize(as, docURL, "http://127.0.0.1:1/cb")
	if st != http.StatusFound || back.Get("code") == "" {
		t.Fatalf("CIMD client: %d %v", st, back)
	}
	if st, _ := postForm(t, as.Issuer+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "client_id": {docURL},
		"redirect_uri": {"http://127.0.0.1:1/cb"}, "code_verifier": {verifier}}, "", ""); st != 200 {
		t.Fatalf("token for the CIMD client: %d", st)
	}
	for name, c := range map[string]struct {
		as           *authtest.Server
		id, redirect string
	}{
		"unlisted redirect":      {as, docURL, "http://127.0.0.1:2/cb"},
		"document of another id": {as, docs.URL + "/other.json", "http://127.0.0.1:1/cb"},
		"no CIMD support":        {plain, docURL, "http://127.0.0.1:1/cb"},
		"not a document URL":     {as, "http://client.example.com/client.json", "http://127.0.0.1:1/cb"},
	} {
		if st, _ := authorize(c.as, c.id, c.redirect); st != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, st)
		}
	}
}

func sha256Sum(v string) string {
	return base64.RawURLEncoding.EncodeToString(sha256Bytes(v))
}

// TestIDJAG: the identity provider exchanges its ID token for an ID-JAG
// (RFC 8693), which the authorization server trusting it turns into an
// access token for the resource (RFC 7523, for the client named in it).
func TestIDJAG(t *testing.T) {
	t.Parallel()
	idp := authtest.New(nil)
	defer idp.Close()
	as := authtest.New(&authtest.Options{IdentityProviders: []*authtest.Server{idp}})
	defer as.Close()
	untrusting := authtest.New(nil)
	defer untrusting.Close()
	idp.AddClient(authtest.Client{ID: "idp-client", IDJAGClientIDs: map[string]string{as.Issuer: "xaa"}})
	as.AddClient(authtest.Client{ID: "xaa", Secret: "pw"})
	as.AddClient(authtest.Client{ID: "other", Secret: "pw"})
	untrusting.AddClient(authtest.Client{ID: "xaa", Secret: "pw"})
	idt := idp.IDToken(authtest.Claims{Subject: "alice", Audience: []string{"idp-client"}})
	exchange := func(audience, subject string) (int, map[string]any) {
		return postForm(t, idp.Issuer+"/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token": {subject}, "subject_token_type": {authtest.TokenTypeIDToken}, "requested_token_type": {authtest.TokenTypeIDJAG},
			"audience": {audience}, "resource": {"https://mcp.example.com/mcp"}, "scope": {"notes"}, "client_id": {"idp-client"}}, "", "")
	}
	if st, _ := exchange(as.Issuer, "not-an-id-token"); st != 400 {
		t.Fatalf("exchange of garbage: %d", st)
	}
	if st, _ := exchange(as.Issuer, as.IDToken(authtest.Claims{})); st != 400 {
		t.Fatalf("exchange of another server's ID token: %d", st)
	}
	st, ex := exchange(as.Issuer, idt)
	if st != 200 || ex["issued_token_type"] != authtest.TokenTypeIDJAG {
		t.Fatalf("exchange: %d %v", st, ex)
	}
	jag := ex["access_token"].(string)
	bearer := func(at *authtest.Server, user, assertion string) (int, map[string]any) {
		return postForm(t, at.Issuer+"/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}, user, "pw")
	}
	if st, _ := bearer(untrusting, "xaa", jag); st != 400 {
		t.Fatalf("an ID-JAG at a server that does not trust the IdP: %d", st)
	}
	if st, _ := bearer(as, "other", jag); st != 400 {
		t.Fatalf("an ID-JAG for another client: %d", st)
	}
	if st, _ := bearer(as, "xaa", idt); st != 400 {
		t.Fatalf("an ID token as the assertion: %d", st)
	}
	st, tok := bearer(as, "xaa", jag)
	if st != 200 || tok["scope"] != "notes" || tok["refresh_token"] != nil {
		t.Fatalf("jwt-bearer: %d %v", st, tok)
	}
	_, info := postForm(t, as.Issuer+"/introspect", url.Values{"token": {tok["access_token"].(string)}}, as.IntrospectionClientID, as.IntrospectionSecret)
	if info["active"] != true || info["sub"] != "alice" || info["client_id"] != "xaa" || info["aud"] != "https://mcp.example.com/mcp" {
		t.Fatalf("the access token: %v", info)
	}
	if st, _ := exchange("https://unknown.example", idt); st != 200 {
		t.Fatalf("exchange for an unmapped audience: %d", st)
	}
}

// TestRevokeIssued: every access token issued so far turns inactive; its
// refresh token still works, and the new access token is active.
func TestRevokeIssued(t *testing.T) {
	t.Parallel()
	as := authtest.New(nil)
	defer as.Close()
	as.AddClient(authtest.Client{ID: "svc", Secret: "pw"})
	active := func(tok any) any {
		_, info := postForm(t, as.Issuer+"/introspect", url.Values{"token": {tok.(string)}}, as.IntrospectionClientID, as.IntrospectionSecret)
		return info["active"]
	}
	_, a := postForm(t, as.Issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, "svc", "pw")
	_, b := postForm(t, as.Issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, "svc", "pw")
	minted := as.Mint(authtest.Claims{})
	as.RevokeIssued()
	_, c := postForm(t, as.Issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, "svc", "pw")
	if active(a["access_token"]) != false || active(b["access_token"]) != false || active(c["access_token"]) != true || active(minted) != true {
		t.Fatal("RevokeIssued: want the two issued tokens inactive, the later one and the minted one active")
	}
}
