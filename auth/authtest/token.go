package authtest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

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

func (s *Server) grantTypes() []string {
	g := []string{grantCode, grantRefresh, grantClientCreds, grantTokenExchange}
	if len(s.opts.IdentityProviders) > 0 {
		g = append(g, grantJWTBearer)
	}
	return g
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
	// The proof is checked first: a nonce demand must not use up the
	// code it comes with.
	jkt, ok := s.tokenProof(w, r)
	if !ok {
		return
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
		if c.jkt != "" && c.jkt != jkt {
			// RFC 9449 §5: a public client's refresh token is bound to
			// the key of the proof it was issued with.
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is bound to another DPoP key")
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
	tokenType := "Bearer"
	if jkt != "" {
		cl2.Extra = map[string]any{"cnf": map[string]any{"jkt": jkt}}
		tokenType = "DPoP"
		if cl.method == "none" {
			g.jkt = jkt
		}
	}
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
		"token_type":   tokenType,
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
