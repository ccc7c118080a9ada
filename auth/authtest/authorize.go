package authtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

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
