package authtest

import (
	"crypto"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// dpopAlgs are the proof algorithms the server accepts and advertises
// (dpop_signing_alg_values_supported, RFC 9449 §5.1).
var dpopAlgs = []string{"ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"}

// tokenProof checks the DPoP proof of a token request (RFC 9449 §4.3, §5)
// when Options.DPoP is set: it returns the thumbprint of the proof's key
// ("" without a proof), or answers the request (400 invalid_dpop_proof,
// or use_dpop_nonce with a DPoP-Nonce under Options.DPoPNonce, §8) and
// returns ok false.
func (s *Server) tokenProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	if !s.opts.DPoP {
		return "", true
	}
	ps := r.Header.Values("DPoP")
	switch len(ps) {
	case 0:
		return "", true
	case 1:
	default:
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", "more than one DPoP header")
		return "", false
	}
	claims, jkt, why := verifyProof(ps[0], http.MethodPost, s.Issuer+"/token")
	if why != "" {
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", why)
		return "", false
	}
	if s.opts.DPoPNonce {
		if n, _ := claims["nonce"].(string); n != s.DPoPNonce() {
			w.Header().Set("DPoP-Nonce", s.DPoPNonce())
			oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "the authorization server requires a nonce in the DPoP proof")
			return "", false
		}
	}
	return jkt, true
}

// verifyProof checks a proof for a request with method to the URL htu,
// without an access token, and returns its claims and its key's RFC 7638
// thumbprint, or why it is refused.
func verifyProof(proof, method, htu string) (map[string]any, string, string) {
	if len(proof) > 8<<10 {
		return nil, "", "proof too large"
	}
	msg, err := jws.Parse([]byte(proof))
	if err != nil || len(msg.Signatures()) != 1 {
		return nil, "", "not a compact JWS"
	}
	h := msg.Signatures()[0].ProtectedHeaders()
	if h.Type() != "dpop+jwt" {
		return nil, "", "typ is not dpop+jwt"
	}
	alg := h.Algorithm().String()
	ok := false
	for _, a := range dpopAlgs {
		ok = ok || a == alg
	}
	if !ok {
		return nil, "", "alg not accepted"
	}
	key := h.JWK()
	if key == nil {
		return nil, "", "no jwk"
	}
	switch key.(type) {
	case jwk.ECDSAPrivateKey, jwk.RSAPrivateKey, jwk.OKPPrivateKey, jwk.SymmetricKey:
		return nil, "", "jwk is not a public key"
	}
	payload, err := jws.Verify([]byte(proof), jws.WithKey(jwa.SignatureAlgorithm(alg), key))
	if err != nil {
		return nil, "", "signature"
	}
	var c map[string]any
	if json.Unmarshal(payload, &c) != nil {
		return nil, "", "claims"
	}
	jti, _ := c["jti"].(string)
	htm, _ := c["htm"].(string)
	u, _ := c["htu"].(string)
	iat, _ := c["iat"].(float64)
	if jti == "" || htm != method || strings.TrimSuffix(u, "/") != strings.TrimSuffix(htu, "/") {
		return nil, "", "jti, htm or htu"
	}
	if d := time.Since(time.Unix(int64(iat), 0)); d > time.Minute || d < -5*time.Second {
		return nil, "", "iat outside the accepted window"
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, "", "thumbprint"
	}
	return c, base64.RawURLEncoding.EncodeToString(tp), ""
}

// DPoPNonce is the nonce the token endpoint demands under
// Options.DPoPNonce.
func (s *Server) DPoPNonce() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dpopNonce
}

// RotateDPoPNonce replaces the nonce the token endpoint demands: proofs
// with the old one are answered use_dpop_nonce.
func (s *Server) RotateDPoPNonce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dpopNonce = randomString(16)
}
