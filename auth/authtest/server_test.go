package authtest_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/auth/authtest"
)

// readJSON ends the test on err, else decodes the JSON body of res into
// v and closes it.
func readJSON(t *testing.T, res *http.Response, err error, v any) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	json.NewDecoder(res.Body).Decode(v)
}

func postForm(t *testing.T, u string, f url.Values, user, pass string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	res, err := http.DefaultClient.Do(req)
	var m map[string]any
	readJSON(t, res, err, &m)
	return res.StatusCode, m
}

// TestCodeFlow: authorize (PKCE required, state and iss returned), token
// (verifier checked, resource becomes aud), refresh (rotated, single use),
// introspection (authenticated, outage switch).
func TestCodeFlow(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{OpaqueTokens: true})
	defer as.Close()
	redirect := "http://127.0.0.1:1/cb"
	client := as.RegisterClient(redirect)
	verifier := "a-verifier-that-is-long-enough-0123456789abcdef"
	sum := sha256.Sum256([]byte(verifier))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorize := func(extra url.Values) url.Values {
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"s1"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
			"scope": {"a b"}, "resource": {"https://mcp.example.com/mcp"}}
		for k, v := range extra {
			q[k] = v
		}
		res, err := noFollow.Get(as.Issuer + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc, _ := url.Parse(res.Header.Get("Location"))
		return loc.Query()
	}
	if back := authorize(url.Values{"code_challenge_method": {"plain"}}); back.Get("error") != "invalid_request" {
		t.Fatalf("plain PKCE accepted: %v", back)
	}
	back := authorize(nil)
	if back.Get("state") != "s1" || back.Get("iss") != as.Issuer || back.Get("code") == "" {
		t.Fatalf("redirect %v", back)
	}
	token := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {redirect},
		"client_id": {client}, "code_verifier": {"wrong-verifier-0123456789-0123456789-0123"}}
	if st, _ := postForm(t, as.Issuer+"/token", token, "", ""); st != 400 {
		t.Fatalf("wrong verifier: %d", st)
	}
	back = authorize(nil)
	token.Set("code", back.Get("code"))
	token.Set("code_verifier", verifier)
	st, tok := postForm(t, as.Issuer+"/token", token, "", "")
	if st != 200 || tok["access_token"] == nil || tok["refresh_token"] == nil || tok["scope"] != "a b" {
		t.Fatalf("token: %d %v", st, tok)
	}
	if st, _ := postForm(t, as.Issuer+"/token", token, "", ""); st != 400 {
		t.Fatalf("code reused: %d", st)
	}
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {client}}
	st, tok2 := postForm(t, as.Issuer+"/token", refresh, "", "")
	if st != 200 || tok2["access_token"] == tok["access_token"] {
		t.Fatalf("refresh: %d %v", st, tok2)
	}
	if st, _ := postForm(t, as.Issuer+"/token", refresh, "", ""); st != 400 {
		t.Fatalf("refresh token reused: %d", st)
	}

	in := url.Values{"token": {tok2["access_token"].(string)}}
	if st, _ := postForm(t, as.Issuer+"/introspect", in, "", ""); st != 401 {
		t.Fatalf("unauthenticated introspection: %d", st)
	}
	st, info := postForm(t, as.Issuer+"/introspect", in, as.IntrospectionClientID, as.IntrospectionSecret)
	if st != 200 || info["active"] != true || info["aud"] != "https://mcp.example.com/mcp" || info["scope"] != "a b" {
		t.Fatalf("introspection: %d %v", st, info)
	}
	as.SetIntrospectionDown(true)
	if st, _ := postForm(t, as.Issuer+"/introspect", in, as.IntrospectionClientID, as.IntrospectionSecret); st != 503 {
		t.Fatalf("outage: %d", st)
	}
	as.SetIntrospectionDown(false)
	as.Revoke(tok2["access_token"].(string))
	if _, info := postForm(t, as.Issuer+"/introspect", in, as.IntrospectionClientID, as.IntrospectionSecret); info["active"] != false {
		t.Fatalf("revoked: %v", info)
	}
}

func TestRegistrationAndMetadata(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{IssuerPath: "/t1"})
	defer as.Close()
	res, err := http.Post(as.Issuer+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
	var reg map[string]any
	readJSON(t, res, err, &reg)
	if res.StatusCode != 201 || reg["client_id"] == "" {
		t.Fatalf("registration: %d %v", res.StatusCode, reg)
	}
	for _, u := range []string{as.URL + "/.well-known/oauth-authorization-server/t1", as.URL + "/.well-known/openid-configuration/t1",
		as.Issuer + "/.well-known/openid-configuration"} {
		res, err := http.Get(u)
		var md map[string]any
		readJSON(t, res, err, &md)
		if md["issuer"] != as.Issuer || md["jwks_uri"] != as.Issuer+"/jwks" {
			t.Fatalf("%s: %v", u, md)
		}
		if _, ok := md["scopes_supported"]; ok {
			t.Fatalf("%s: scopes_supported without scopes: %v", u, md["scopes_supported"])
		}
	}
	// Rotation keeps the previous keys published.
	rk, ek := as.Kids()
	as.Rotate()
	res, _ = http.Get(as.Issuer + "/jwks")
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	json.NewDecoder(res.Body).Decode(&set)
	res.Body.Close()
	kids := map[any]bool{}
	for _, k := range set.Keys {
		kids[k["kid"]] = true
	}
	nrk, nek := as.Kids()
	if len(set.Keys) != 4 || !kids[rk] || !kids[ek] || !kids[nrk] || !kids[nek] || nrk == rk {
		t.Fatalf("JWKS after rotation: %v", kids)
	}
}

// TestHoldRedirectAndCounters: a held endpoint serves its requests once
// released and counts those whose client left; a redirected endpoint
// answers 307 to MovedPrefix, where the real endpoint answers.
func TestHoldRedirectAndCounters(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{JWKSURI: "http://jwks.example.test/keys"})
	defer as.Close()
	h := as.Hold(authtest.EndpointJWKS)
	done := make(chan int, 1)
	go func() {
		res, err := http.Get(as.Issuer + "/jwks")
		if err != nil {
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	<-h.Arrived()
	if n := as.JWKSFetches(); n != 0 {
		t.Fatalf("a held request counted as served: %d", n)
	}
	h.Release()
	if st := <-done; st != 200 || h.Served() != 1 || h.Abandoned() != 0 || as.JWKSFetches() != 1 {
		t.Fatalf("after release: status %d, served %d, abandoned %d, fetches %d", st, h.Served(), h.Abandoned(), as.JWKSFetches())
	}

	// A client that leaves while held is counted as abandoned.
	h = as.Hold(authtest.EndpointJWKS)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.Issuer+"/jwks", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	<-h.Arrived()
	cancel()
	<-h.Left()
	if h.Abandoned() != 1 || h.Served() != 0 {
		t.Fatalf("abandoned %d, served %d", h.Abandoned(), h.Served())
	}
	h.Release()

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	as.SetRedirect(authtest.EndpointIntrospection, true)
	req, _ := http.NewRequest(http.MethodPost, as.Issuer+"/introspect", strings.NewReader("token=x"))
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTemporaryRedirect || res.Header.Get("Location") != as.URL+authtest.MovedPrefix+"/introspect" {
		t.Fatalf("redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if st, _ := postForm(t, res.Header.Get("Location"), url.Values{"token": {"x"}}, as.IntrospectionClientID, as.IntrospectionSecret); st != 200 || as.Moved() != 1 {
		t.Fatalf("redirect target: %d, moved %d", st, as.Moved())
	}

	res, err = http.Get(as.URL + "/.well-known/oauth-authorization-server")
	var md map[string]any
	readJSON(t, res, err, &md)
	if md["jwks_uri"] != "http://jwks.example.test/keys" || as.MetadataFetches() != 1 {
		t.Fatalf("metadata %v, fetches %d", md, as.MetadataFetches())
	}
}

// TestRefreshTokenIntrospection: a refresh token is introspected active with
// token_type refresh_token.
func TestRefreshTokenIntrospection(t *testing.T) {
	t.Parallel()
	as := authtest.New(&authtest.Options{TLS: true})
	defer as.Close()
	if !strings.HasPrefix(as.Issuer, "https://") {
		t.Fatalf("TLS issuer %q", as.Issuer)
	}
	rt := as.RefreshToken(authtest.Claims{Audience: []string{"https://mcp.example.com/mcp"}, Scope: "a"})
	req, _ := http.NewRequest(http.MethodPost, as.Issuer+"/introspect", strings.NewReader(url.Values{"token": {rt}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(as.IntrospectionClientID), url.QueryEscape(as.IntrospectionSecret))
	res, err := as.Client().Do(req)
	var info map[string]any
	readJSON(t, res, err, &info)
	if info["active"] != true || info["token_type"] != "refresh_token" || info["aud"] != "https://mcp.example.com/mcp" || info["sub"] != "user-1" {
		t.Fatalf("introspection of a refresh token: %v", info)
	}
}

func sha256Bytes(v string) []byte {
	s := sha256.Sum256([]byte(v))
	return s[:]
}
