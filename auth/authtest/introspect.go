package authtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RefreshToken returns a refresh token for c's client, subject, scope and
// first audience (the resource), as /token would issue; it is good for one
// refresh_token grant, and introspection answers it active with token_type
// "refresh_token".
func (s *Server) RefreshToken(c Claims) string {
	m := s.claimsMap(c)
	g := grant{client: fmt.Sprint(m["client_id"]), subject: fmt.Sprint(m["sub"]), scope: c.Scope}
	if len(c.Audience) > 0 {
		g.resource = c.Audience[0]
	}
	rt := randomString(24)
	s.mu.Lock()
	s.refresh[rt] = g
	s.mu.Unlock()
	return rt
}

// Revoke makes introspection answer inactive for tok.
func (s *Server) Revoke(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[tok] = true
}

// RevokeIssued revokes (as Revoke) every access token /token has issued so
// far; refresh tokens stay valid.
func (s *Server) RevokeIssued() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range s.issued {
		s.revoked[tok] = true
	}
	s.issued = nil
}

// Opaque returns an opaque access token for c, known to introspection until
// its expiry.
func (s *Server) Opaque(c Claims) string {
	tok := "opaque-" + randomString(24)
	m := s.claimsMap(c)
	exp := time.Now().Add(time.Hour)
	if v, ok := m["exp"].(int64); ok {
		exp = time.Unix(v, 0)
	}
	s.mu.Lock()
	s.opaque[tok] = opaque{claims: m, expires: exp}
	s.mu.Unlock()
	return tok
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if !s.arrive(w, r, EndpointIntrospection, &s.introspections, &s.intDown, "introspection is down") {
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	if !ok || id != s.IntrospectionClientID || secret != s.IntrospectionSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	s.introOf[tok]++
	o, known := s.opaque[tok]
	revoked := s.revoked[tok]
	rt, isRefresh := s.refresh[tok]
	s.mu.Unlock()
	if revoked {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	if isRefresh {
		// RFC 7662 §2.1: refresh tokens may be introspected too; the answer
		// says what the token is (token_type, as some servers word it).
		out := map[string]any{"active": true, "token_type": "refresh_token", "iss": s.Issuer,
			"client_id": rt.client, "sub": rt.subject, "exp": time.Now().Add(24 * time.Hour).Unix()}
		if rt.scope != "" {
			out["scope"] = rt.scope
		}
		if rt.resource != "" {
			out["aud"] = rt.resource
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	var claims map[string]any
	switch {
	case known && time.Now().Before(o.expires):
		claims = o.claims
	case strings.Count(tok, ".") == 2:
		claims = s.verifyOwn(tok)
	}
	if claims == nil {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	out := map[string]any{"active": true, "token_type": "Bearer"}
	for k, v := range claims {
		out[k] = v
	}
	writeJSON(w, http.StatusOK, out)
}
