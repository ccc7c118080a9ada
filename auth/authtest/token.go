package oauthtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Grant types and token types of the token endpoint.
const (
	grantCode          = "authorization_code"
	grantRefresh       = "refresh_token"
	grantClientCreds   = "client_credentials"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	assertionJWTBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

	// TokenTypeIDToken and TokenTypeIDJAG are the token types of the
	// token exchange (RFC 8693 §3) that turns an ID token into an ID-JAG.
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
	// TypIDJAG is the typ header of an ID-JAG.
	TypIDJAG = "oauth-id-jag+jwt"
)

// Client is a client registered with the server by AddClient.
type Client struct {
	// ID is the client_id.
	ID string
	// Secret authenticates a client_secret_basic or client_secret_post
	// client.
	Secret string
	// AuthMethod is the token endpoint authentication method the client
	// must use: none, client_secret_basic, client_secret_post or
	// private_key_jwt. "" means private_key_jwt when Key is set,
	// client_secret_basic when Secret is, and none otherwise.
	AuthMethod string
	// Key verifies the private_key_jwt client assertions (RFC 7523 §2.2):
	// an *ecdsa.PublicKey (ES256/384/512 by curve) or an *rsa.PublicKey
	// (RS256).
	Key crypto.PublicKey
	// RedirectURIs are the redirect URIs the authorization endpoint
	// accepts for the client.
	RedirectURIs []string
	// IDJAGClientIDs maps an authorization server's issuer to this
	// client's client_id there: the client_id claim of the ID-JAGs the
	// token exchange issues for that audience. An audience it does not
	// map gets ID.
	IDJAGClientIDs map[string]string
}

// AddClient registers c, replacing a client with the same id.
func (s *Server) AddClient(c Client) {
	m := c.AuthMethod
	switch {
	case m != "":
	case c.Key != nil:
		m = "private_key_jwt"
	case c.Secret != "":
		m = "client_secret_basic"
	default:
		m = "none"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = &client{redirects: slices.Clone(c.RedirectURIs), method: m, secret: c.Secret, key: c.Key, idjag: maps.Clone(c.IDJAGClientIDs)}
}

// RegisterClient registers a public client with redirect URIs and returns
// its id (as /register would).
func (s *Server) RegisterClient(redirectURIs ...string) string {
	id := "client-" + randomString(6)
	s.AddClient(Client{ID: id, RedirectURIs: redirectURIs})
	return id
}

// Requests returns the requests endpoint e received, oldest first (the
// last few thousand), including those answered with an error; a request a
// Hold holds is listed once released, one a redirect answers is listed
// under its target. Their maps are shared: do not modify them.
func (s *Server) Requests(e Endpoint) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log[e])
}

// record adds r to the requests of e. A POST form is parsed here.
func (s *Server) record(e Endpoint, r *http.Request, body map[string]any) {
	req := Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), JSON: maps.Clone(body)}
	if r.Method == http.MethodGet {
		req.Form = r.URL.Query()
	} else if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if r.ParseForm() == nil {
			req.Form = maps.Clone(r.PostForm)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := append(s.log[e], req)
	if len(l) > maxLogged {
		l = slices.Delete(l, 0, len(l)-maxLogged)
	}
	s.log[e] = l
}

func (s *Server) grantTypes() []string {
	g := []string{grantCode, grantRefresh, grantClientCreds, grantTokenExchange}
	if len(s.opts.IdentityProviders) > 0 {
		g = append(g, grantJWTBearer)
	}
	return g
}

// lookupClient returns the registered client id, or, with
// ClientIDMetadataDocuments, the client its metadata document describes.
func (s *Server) lookupClient(ctx context.Context, id string) (*client, bool) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if ok || !s.opts.ClientIDMetadataDocuments || !metadataDocumentURL(id) {
		return c, ok
	}
	return s.fetchClientMetadata(ctx, id)
}

// metadataDocumentURL reports whether id has the form of a Client ID
// Metadata Document URL: https with a path, or http on a loopback host; no
// fragment.
func metadataDocumentURL(id string) bool {
	u, err := url.Parse(id)
	if err != nil || u.Fragment != "" || u.Path == "" || u.Path == "/" {
		return false
	}
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		h := u.Hostname()
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// fetchClientMetadata fetches the Client ID Metadata Document at id: a
// public client whose redirect URIs the document lists.
func (s *Server) fetchClientMetadata(ctx context.Context, id string) (*client, bool) {
	hc := http.Client{}
	if s.opts.HTTPClient != nil {
		hc = *s.opts.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, false
	}
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, false
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&doc); err != nil || doc.ClientID != id {
		return nil, false
	}
	if doc.AuthMethod != "" && doc.AuthMethod != "none" {
		return nil, false // only public clients here
	}
	return &client{redirects: doc.RedirectURIs, method: "none"}, true
}

// authorize approves every valid request at once (no user interaction).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	s.record(EndpointAuthorization, r, nil)
	q := r.URL.Query()
	id, redirect := q.Get("client_id"), q.Get("redirect_uri")
	c, known := s.lookupClient(r.Context(), id)
	if !known {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if !slices.Contains(c.redirects, redirect) {
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	}
	ru, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	back := ru.Query()
	iss := s.Issuer
	if s.opts.Iss != nil {
		iss = s.opts.Iss(s.Issuer)
	}
	if iss != "" {
		back.Set("iss", iss)
	}
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	switch {
	case s.opts.AuthorizeError != "":
		back.Set("error", s.opts.AuthorizeError)
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back.Set("error", "invalid_request")
		back.Set("error_description", "response_type=code and PKCE S256 are required")
	default:
		code := randomString(16)
		s.mu.Lock()
		s.codes[code] = grant{client: id, redirect: redirect, challenge: q.Get("code_challenge"),
			scope: q.Get("scope"), resource: q.Get("resource"), subject: "user-1", expires: time.Now().Add(time.Minute)}
		s.mu.Unlock()
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

// authenticate checks the client authentication of a token request
// (RFC 6749 §2.3, RFC 7523 §2.2) against the method the client was
// registered with, and returns the client's id and registration.
func (s *Server) authenticate(r *http.Request, f url.Values) (string, *client, bool) {
	if user, pass, ok := r.BasicAuth(); ok {
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		c, known := s.lookupClient(r.Context(), id)
		ok := err1 == nil && err2 == nil && known && c.method == "client_secret_basic" && c.secret != "" &&
			subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) == 1 &&
			(f.Get("client_id") == "" || f.Get("client_id") == id)
		return id, c, ok
	}
	if f.Get("client_assertion_type") == assertionJWTBearer {
		id, c, ok := s.verifyClientAssertion(r.Context(), f.Get("client_assertion"))
		return id, c, ok && (f.Get("client_id") == "" || f.Get("client_id") == id)
	}
	id := f.Get("client_id")
	c, known := s.lookupClient(r.Context(), id)
	if !known {
		return id, nil, false
	}
	switch c.method {
	case "none":
		return id, c, f.Get("client_secret") == ""
	case "client_secret_post":
		return id, c, c.secret != "" && subtle.ConstantTimeCompare([]byte(f.Get("client_secret")), []byte(c.secret)) == 1
	}
	return id, c, false
}

// verifyClientAssertion verifies a private_key_jwt client assertion: signed
// by the key of the client its iss and sub name, for this server (aud: the
// issuer or the token endpoint), not expired.
func (s *Server) verifyClientAssertion(ctx context.Context, assertion string) (string, *client, bool) {
	msg, err := jws.Parse([]byte(assertion))
	if err != nil {
		return "", nil, false
	}
	var claims map[string]any
	if json.Unmarshal(msg.Payload(), &claims) != nil {
		return "", nil, false
	}
	id, _ := claims["iss"].(string)
	if sub, _ := claims["sub"].(string); id == "" || sub != id {
		return "", nil, false
	}
	c, known := s.lookupClient(ctx, id)
	if !known || c.method != "private_key_jwt" || c.key == nil {
		return id, c, false
	}
	alg, ok := keyAlg(c.key)
	if !ok {
		return id, c, false
	}
	if _, err := jws.Verify([]byte(assertion), jws.WithKey(alg, c.key)); err != nil {
		return id, c, false
	}
	if !audience(claims, s.Issuer, s.Issuer+"/token") || !unexpired(claims, true) {
		return id, c, false
	}
	return id, c, true
}

// keyAlg is the JWS algorithm of a client's public key.
func keyAlg(k crypto.PublicKey) (jwa.SignatureAlgorithm, bool) {
	switch k := k.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jwa.ES256, true
		case elliptic.P384():
			return jwa.ES384, true
		case elliptic.P521():
			return jwa.ES512, true
		}
	case *rsa.PublicKey:
		return jwa.RS256, true
	}
	return "", false
}

// audience reports whether the aud claim names one of want.
func audience(claims map[string]any, want ...string) bool {
	switch a := claims["aud"].(type) {
	case string:
		return slices.Contains(want, a)
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok && slices.Contains(want, s) {
				return true
			}
		}
	}
	return false
}

// unexpired reports whether exp, if present (required when need), is in
// the future.
func unexpired(claims map[string]any, need bool) bool {
	exp, ok := claims["exp"].(float64)
	if !ok {
		return !need
	}
	return time.Now().Unix() < int64(exp)
}

func tokenError(w http.ResponseWriter, e *TokenError) {
	st, code := e.Status, e.Code
	if st == 0 {
		st = http.StatusBadRequest
	}
	if code == "" {
		code = "invalid_grant"
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
	oauthError(w, st, code, "")
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	s.record(EndpointToken, r, nil)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	if s.opts.TokenError != nil {
		if e := s.opts.TokenError(f); e != nil {
			tokenError(w, e)
			return
		}
	}
	id, cl, ok := s.authenticate(r, f)
	if !ok {
		if r.Header.Get("Authorization") != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		}
		oauthError(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	var g grant
	refresh := true
	switch f.Get("grant_type") {
	case grantCode:
		s.mu.Lock()
		c, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		s.mu.Unlock()
		if !ok || time.Now().After(c.expires) || c.client != id || c.redirect != f.Get("redirect_uri") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or mismatched code")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) != 1 {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
			return
		}
		if res := f.Get("resource"); res != "" && res != c.resource {
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request")
			return
		}
		g = c
	case grantRefresh:
		s.mu.Lock()
		c, ok := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotation: single use
		s.mu.Unlock()
		if !ok || c.client != id {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		if sc := f.Get("scope"); sc != "" {
			c.scope = sc
		}
		if res := f.Get("resource"); res != "" {
			c.resource = res
		}
		g = c
	case grantClientCreds:
		// RFC 6749 §4.4: confidential clients only, and no refresh token.
		if cl.method == "none" {
			oauthError(w, http.StatusBadRequest, "unauthorized_client", "client_credentials needs a confidential client")
			return
		}
		g = grant{client: id, subject: id, scope: f.Get("scope"), resource: f.Get("resource")}
		refresh = false
	case grantJWTBearer:
		claims, ok := s.verifyIDJAG(f.Get("assertion"))
		if !ok || claims["client_id"] != id {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the assertion is not an ID-JAG for this client from a trusted identity provider")
			return
		}
		sub, _ := claims["sub"].(string)
		res, _ := claims["resource"].(string)
		scope, _ := claims["scope"].(string)
		if sc := f.Get("scope"); sc != "" {
			scope = sc
		}
		g = grant{client: id, subject: sub, scope: scope, resource: res}
		refresh = false
	case grantTokenExchange:
		s.exchange(w, f, id, cl)
		return
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	cl2 := Claims{Subject: g.subject, ClientID: g.client, Scope: g.scope, Expiry: time.Now().Add(s.opts.TokenTTL)}
	if g.resource != "" {
		cl2.Audience = []string{g.resource}
	}
	var access string
	if s.opts.OpaqueTokens {
		access = s.Opaque(cl2)
	} else {
		access = s.MintWith(cl2, MintOptions{Alg: s.opts.Alg})
	}
	s.mu.Lock()
	s.issued = append(s.issued, access)
	s.mu.Unlock()
	resp := map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   int(s.opts.TokenTTL / time.Second),
	}
	if refresh {
		rt := randomString(24)
		s.mu.Lock()
		s.refresh[rt] = g
		s.mu.Unlock()
		resp["refresh_token"] = rt
	}
	if g.scope != "" {
		resp["scope"] = g.scope
	}
	writeJSON(w, http.StatusOK, resp)
}

// IDToken returns an OpenID Connect ID token for c (typ JWT, aud the
// client), the subject token that the token exchange turns into an ID-JAG.
func (s *Server) IDToken(c Claims) string {
	return s.MintWith(c, MintOptions{Typ: "JWT"})
}

// exchange is the identity provider's RFC 8693 token exchange of an ID
// token it issued (IDToken) for an ID-JAG: a JWT (typ oauth-id-jag+jwt)
// naming the subject, the authorization server (aud), the client there
// (client_id), the resource and the scopes, valid five minutes.
func (s *Server) exchange(w http.ResponseWriter, f url.Values, id string, cl *client) {
	if f.Get("subject_token_type") != TokenTypeIDToken || f.Get("requested_token_type") != TokenTypeIDJAG ||
		f.Get("audience") == "" || f.Get("resource") == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "an ID token for an ID-JAG, with audience and resource, is needed")
		return
	}
	idt := s.verifyOwn(f.Get("subject_token"))
	if idt == nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid ID token of this server")
		return
	}
	aud := f.Get("audience")
	clientID := id
	if v, ok := cl.idjag[aud]; ok {
		clientID = v
	}
	now := time.Now()
	claims := map[string]any{"iss": s.Issuer, "sub": idt["sub"], "aud": aud, "client_id": clientID,
		"resource": f.Get("resource"), "jti": randomString(12), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if sc := f.Get("scope"); sc != "" {
		claims["scope"] = sc
	}
	payload, _ := json.Marshal(claims)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": s.sign(payload, MintOptions{Typ: TypIDJAG}),
		"issued_token_type": TokenTypeIDJAG, "token_type": "N_A", "expires_in": 300})
}

// verifyIDJAG returns the claims of an ID-JAG signed by one of the trusted
// identity providers, for this server, not expired; nil otherwise.
func (s *Server) verifyIDJAG(tok string) (map[string]any, bool) {
	msg, err := jws.Parse([]byte(tok))
	if err != nil || len(msg.Signatures()) != 1 || msg.Signatures()[0].ProtectedHeaders().Type() != TypIDJAG {
		return nil, false
	}
	for _, idp := range s.opts.IdentityProviders {
		c := idp.verifyOwn(tok)
		if c == nil || c["iss"] != idp.Issuer {
			continue
		}
		return c, audience(c, s.Issuer) && unexpired(c, true)
	}
	return nil, false
}

// register implements RFC 7591: the client gets the token endpoint
// authentication method it asks for when the server supports it (the
// first supported one otherwise; client_secret_basic by default, §2), and a
// secret unless that is none.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md map[string]any
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&md)
	s.record(EndpointRegistration, r, md)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "bad JSON")
		return
	}
	var uris []string
	if l, ok := md["redirect_uris"].([]any); ok {
		for _, u := range l {
			if s, ok := u.(string); ok {
				uris = append(uris, s)
			}
		}
	}
	if len(uris) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	method, _ := md["token_endpoint_auth_method"].(string)
	if method == "" {
		method = "client_secret_basic"
	}
	if !slices.Contains(s.opts.AuthMethods, method) || method == "private_key_jwt" {
		method = "none"
		for _, m := range s.opts.AuthMethods {
			if m != "private_key_jwt" {
				method = m
				break
			}
		}
	}
	c := Client{ID: "dcr-" + randomString(9), AuthMethod: method, RedirectURIs: uris}
	if method != "none" {
		c.Secret = randomString(18)
	}
	s.AddClient(c)
	md["client_id"] = c.ID
	md["client_id_issued_at"] = time.Now().Unix()
	md["token_endpoint_auth_method"] = method
	if c.Secret != "" {
		md["client_secret"] = c.Secret
		md["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, md)
}
