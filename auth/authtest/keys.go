package authtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Claims describes a token to mint.
type Claims struct {
	// Issuer overrides iss; empty means the server's issuer.
	Issuer string
	// Subject is sub; empty means "user-1".
	Subject string
	// ClientID is client_id; empty means "client-1".
	ClientID string
	// Audience is aud (omitted when empty).
	Audience []string
	// Scope is the space-separated scope claim.
	Scope string
	// Expiry is exp; zero means an hour from now. NoExpiry omits it.
	Expiry   time.Time
	NoExpiry bool
	// NotBefore and IssuedAt are nbf and iat; zero omits nbf and sets iat to
	// now.
	NotBefore, IssuedAt time.Time
	// Extra holds further claims (they override the above; a nil value
	// removes the claim).
	Extra map[string]any
}

// MintOptions changes how MintWith signs.
type MintOptions struct {
	// Alg is "RS256" (default), "ES256", or any other value to sign with
	// Key under that name.
	Alg string
	// Kid overrides the kid header; "-" omits it.
	Kid string
	// Typ overrides the typ header (default "at+jwt"); "-" omits it.
	Typ string
	// Key signs instead of the current key of Alg's type (a key the JWKS
	// does not publish, or []byte for HMAC).
	Key any
	// Header holds extra protected header members.
	Header map[string]any
}

// keyPair is a signing key. An RSA key is generated on first use: a
// 2048-bit key takes about 100 ms (more under the race detector), which
// a test that only needs EC keys or opaque tokens should not pay.
type keyPair struct {
	kid string
	gen func() crypto.Signer

	mu   sync.Mutex
	priv crypto.Signer // nil until generated
}

// key returns the private key, generating it if needed.
func (k *keyPair) key() crypto.Signer {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.priv == nil {
		k.priv = k.gen()
	}
	return k.priv
}

// generated returns the private key, or nil if it was never needed (so
// nothing was signed with it).
func (k *keyPair) generated() crypto.Signer {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.priv
}

type generation struct{ rsa, ec *keyPair }

func newGeneration(n int) generation {
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return generation{
		rsa: &keyPair{kid: fmt.Sprintf("rsa-%d", n), gen: func() crypto.Signer {
			rk, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			return rk
		}},
		ec: &keyPair{kid: fmt.Sprintf("ec-%d", n), priv: ek},
	}
}

// Rotate makes a new RSA and EC key current. The previous keys stay in the
// JWKS until the next rotation.
func (s *Server) Rotate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := newGeneration(int(s.seq.Add(1)) + 1)
	s.gens = append([]generation{g}, s.gens[0])
}

// Kids returns the key ids of the current RSA and EC keys.
func (s *Server) Kids() (rsaKid, ecKid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gens[0].rsa.kid, s.gens[0].ec.kid
}

// claimsMap turns c into JWT claims.
func (s *Server) claimsMap(c Claims) map[string]any {
	now := time.Now()
	m := map[string]any{
		"iss":       s.Issuer,
		"sub":       "user-1",
		"client_id": "client-1",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
		"jti":       randomString(12),
	}
	if c.Issuer != "" {
		m["iss"] = c.Issuer
	}
	if c.Subject != "" {
		m["sub"] = c.Subject
	}
	if c.ClientID != "" {
		m["client_id"] = c.ClientID
	}
	if len(c.Audience) == 1 {
		m["aud"] = c.Audience[0]
	} else if len(c.Audience) > 1 {
		m["aud"] = c.Audience
	}
	if c.Scope != "" {
		m["scope"] = c.Scope
	}
	if !c.Expiry.IsZero() {
		m["exp"] = c.Expiry.Unix()
	}
	if c.NoExpiry {
		delete(m, "exp")
	}
	if !c.NotBefore.IsZero() {
		m["nbf"] = c.NotBefore.Unix()
	}
	if !c.IssuedAt.IsZero() {
		m["iat"] = c.IssuedAt.Unix()
	}
	for k, v := range c.Extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

// Mint returns a JWT access token for c, signed RS256 with the current key.
func (s *Server) Mint(c Claims) string { return s.MintWith(c, MintOptions{}) }

// MintWith returns a JWT access token for c signed as o says.
func (s *Server) MintWith(c Claims, o MintOptions) string {
	payload, err := json.Marshal(s.claimsMap(c))
	if err != nil {
		panic(err)
	}
	return s.sign(payload, o)
}

func (s *Server) sign(payload []byte, o MintOptions) string {
	alg := o.Alg
	if alg == "" {
		alg = "RS256"
	}
	s.mu.Lock()
	g := s.gens[0]
	s.mu.Unlock()
	kp := g.rsa
	if strings.HasPrefix(alg, "ES") {
		kp = g.ec
	}
	key, kid := o.Key, kp.kid
	if key == nil {
		key = kp.key()
	}
	if o.Kid != "" {
		kid = o.Kid
	}
	hdr := jws.NewHeaders()
	if kid != "-" {
		hdr.Set(jws.KeyIDKey, kid)
	}
	typ := "at+jwt"
	if o.Typ != "" {
		typ = o.Typ
	}
	if typ != "-" {
		hdr.Set(jws.TypeKey, typ)
	}
	for k, v := range o.Header {
		hdr.Set(k, v)
	}
	b, err := jws.Sign(payload, jws.WithKey(jwa.SignatureAlgorithm(alg), key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		panic(fmt.Sprintf("authtest: sign: %v", err))
	}
	return string(b)
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) jwksURI() string {
	if s.opts.JWKSURI != "" {
		return s.opts.JWKSURI
	}
	return s.Issuer + "/jwks"
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	if !s.arrive(w, r, EndpointJWKS, &s.jwksFetches, &s.jwksDown, "down") {
		return
	}
	s.mu.Lock()
	gens := append([]generation(nil), s.gens...)
	s.mu.Unlock()
	set := jwk.NewSet()
	for _, g := range gens {
		for _, kp := range []*keyPair{g.rsa, g.ec} {
			k, err := jwk.FromRaw(kp.key().Public())
			if err != nil {
				panic(err)
			}
			k.Set(jwk.KeyIDKey, kp.kid)
			k.Set(jwk.KeyUsageKey, "sig")
			set.AddKey(k)
		}
	}
	writeJSON(w, http.StatusOK, set)
}

// verifyOwn returns the claims of a JWT this server signed and that has not
// expired, or nil.
func (s *Server) verifyOwn(tok string) map[string]any {
	s.mu.Lock()
	gens := append([]generation(nil), s.gens...)
	s.mu.Unlock()
	for _, g := range gens {
		for _, kp := range []*keyPair{g.rsa, g.ec} {
			priv := kp.generated()
			if priv == nil {
				continue // never used: nothing was signed with it
			}
			alg := jwa.RS256
			if _, ok := priv.(*ecdsa.PrivateKey); ok {
				alg = jwa.ES256
			}
			payload, err := jws.Verify([]byte(tok), jws.WithKey(alg, priv.Public()))
			if err != nil {
				continue
			}
			var m map[string]any
			if json.Unmarshal(payload, &m) != nil {
				return nil
			}
			if exp, ok := m["exp"].(float64); ok && time.Now().Unix() >= int64(exp) {
				return nil
			}
			return m
		}
	}
	return nil
}
