package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
)

// DPoP modes (Config.DPoP): when the Source binds its tokens to a key with
// DPoP (RFC 9449; MCP SEP-1932).
const (
	// DPoPAuto (the default, "") sends DPoP proofs to an authorization
	// server whose metadata lists the key's algorithm in
	// dpop_signing_alg_values_supported (RFC 9449 §5.1), and uses a token
	// the server issues with token_type DPoP as a DPoP-bound token.
	// Servers that do not advertise DPoP get plain requests and issue
	// Bearer tokens.
	DPoPAuto = ""
	// DPoPOff never sends a DPoP proof: every token is a Bearer token.
	DPoPOff = "off"
	// DPoPRequire sends DPoP proofs on every token request, whatever the
	// metadata says, and refuses a token that is not DPoP-bound
	// (ErrNotDPoPBound): for deployments that must not hold bearer
	// tokens.
	DPoPRequire = "require"
)

// ErrNotDPoPBound: Config.DPoP is DPoPRequire and the authorization server
// issued a token whose token_type is not DPoP.
var ErrNotDPoPBound = errors.New("oauth: the authorization server issued a token that is not DPoP-bound")

// maxNonceLen bounds a DPoP-Nonce value kept from a server; maxNonces
// bounds the origins whose latest nonce is remembered.
const (
	maxNonceLen = 1024
	maxNonces   = 64
)

// dpopState is the DPoP key of a Source and the nonces servers gave it.
type dpopState struct {
	once    sync.Once
	key     crypto.Signer
	keyErr  error
	alg     string
	jwk     map[string]string // the public key (RFC 7517), for the proof header
	jkt     string            // its RFC 7638 thumbprint
	mu      sync.Mutex
	nonces  map[string]string // by origin (scheme://host:port): the latest DPoP-Nonce
	now     func() time.Time
	userKey crypto.Signer
}

// init makes the key: Config.DPoPKey, else a P-256 key generated once.
func (d *dpopState) init() error {
	d.once.Do(func() {
		k := d.userKey
		if k == nil {
			ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				d.keyErr = err
				return
			}
			k = ek
		}
		d.key = k
		if d.alg, d.keyErr = jwsAlg(k); d.keyErr != nil {
			return
		}
		d.jwk, d.keyErr = publicJWK(k.Public())
		if d.keyErr == nil {
			d.jkt = thumbprint(d.jwk)
		}
	})
	return d.keyErr
}

// publicJWK is the public JWK of pub with only the members RFC 7638 §3.2
// requires, which is all a DPoP proof needs.
func publicJWK(pub crypto.PublicKey) (map[string]string, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		ecdh, err := k.ECDH()
		if err != nil {
			return nil, err
		}
		raw := ecdh.Bytes() // 0x04 || X || Y, each fixed-size
		n := (len(raw) - 1) / 2
		return map[string]string{"kty": "EC", "crv": k.Curve.Params().Name, "x": b64(raw[1 : 1+n]), "y": b64(raw[1+n:])}, nil
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}, nil
	case ed25519.PublicKey:
		return map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64(k)}, nil
	}
	return nil, errors.New("oauth: unsupported DPoP key")
}

// thumbprint is the RFC 7638 JWK SHA-256 thumbprint of jwk, which holds
// exactly the required members: encoding/json writes map keys sorted and
// without whitespace, as §3.3 asks.
func thumbprint(jwk map[string]string) string {
	b, _ := json.Marshal(jwk)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// htu is the DPoP htu of a request URL: without query and fragment
// (RFC 9449 §4.2).
func htu(raw string) (string, *url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, err
	}
	v := *u
	v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment, v.User = "", false, "", "", nil
	return v.String(), u, nil
}

// origin is the key of the nonce of a URL's server.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + hostPort(u)
}

// proof mints a DPoP proof JWT (RFC 9449 §4.2) for a request: a fresh jti,
// htm, htu, iat, the latest nonce of the URL's server if any, and, with an
// access token, ath (its SHA-256, §4.2, §7).
func (d *dpopState) proof(method, rawURL, accessToken string) (string, error) {
	if err := d.init(); err != nil {
		return "", err
	}
	h, u, err := htu(rawURL)
	if err != nil {
		return "", err
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": h,
		"iat": now().Unix(),
	}
	d.mu.Lock()
	if n := d.nonces[origin(u)]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return signJWS(d.key, map[string]any{"typ": "dpop+jwt", "jwk": d.jwk}, claims)
}

// noteNonce keeps the DPoP-Nonce of a response from the server of rawURL
// (RFC 9449 §8, §9): the latest one per origin, a bounded number of
// origins, and only a value of the NonceChar grammar (§8.1) of bounded
// length. It reports whether a nonce was kept.
func (d *dpopState) noteNonce(rawURL string, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" || len(n) > maxNonceLen || !nonceChars(n) {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	o := origin(u)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nonces == nil {
		d.nonces = map[string]string{}
	}
	if _, ok := d.nonces[o]; !ok && len(d.nonces) >= maxNonces {
		for k := range d.nonces { // drop one: the map stays bounded
			delete(d.nonces, k)
			break
		}
	}
	d.nonces[o] = n
	return true
}

// nonceChars: 1*NonceChar, NonceChar = %x21 / %x23-5B / %x5D-7E.
func nonceChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// dpopFor reports whether token requests to the authorization server of
// meta carry DPoP proofs (Config.DPoP).
func (s *Source) dpopFor(meta *ServerMetadata) (bool, error) {
	switch s.cfg.DPoP {
	case DPoPOff:
		return false, nil
	case DPoPRequire:
		return true, s.dpop.init()
	case DPoPAuto:
		if meta == nil || len(meta.DPoPSigningAlgValuesSupported) == 0 {
			return false, nil
		}
		if err := s.dpop.init(); err != nil {
			return false, err
		}
		return contains(meta.DPoPSigningAlgValuesSupported, s.dpop.alg), nil
	}
	return false, errors.New("oauth: unknown Config.DPoP mode " + s.cfg.DPoP)
}

// AuthorizeRequest implements client.RequestAuthorizer: the Authorization
// of a request to the MCP endpoint that carries token and, when token is
// DPoP-bound, a fresh DPoP proof for the request's method and URL, with
// ath and the endpoint's latest nonce (RFC 9449 §7.1).
func (s *Source) AuthorizeRequest(_ context.Context, method, rawURL, token string) (http.Header, error) {
	s.mu.Lock()
	bound := s.tok != nil && s.tok.access == token && s.tok.dpop
	s.mu.Unlock()
	if !bound {
		return http.Header{"Authorization": {"Bearer " + token}}, nil
	}
	p, err := s.dpop.proof(method, rawURL, token)
	if err != nil {
		return nil, err
	}
	return http.Header{"Authorization": {"DPoP " + token}, "Dpop": {p}}, nil
}

var _ client.RequestAuthorizer = (*Source)(nil)

// DPoPThumbprint returns the RFC 7638 thumbprint (the cnf.jkt of the
// tokens bound to it) of the Source's DPoP key, making the key first if
// it has not been made yet. It fails when Config.DPoPKey is of an
// unsupported type.
func (s *Source) DPoPThumbprint() (string, error) {
	if err := s.dpop.init(); err != nil {
		return "", err
	}
	return s.dpop.jkt, nil
}

// nonceChallenge reports whether resp is the resource server's demand
// for a nonce (RFC 9449 §9: a 401 whose DPoP challenge says
// error="use_dpop_nonce", with a DPoP-Nonce) to a request that carried a
// proof, and keeps the nonce; the request is then sent again.
func (s *Source) nonceChallenge(endpoint string, resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized || resp.Request == nil || resp.Request.Header.Get("DPoP") == "" {
		return false
	}
	p, ok := dpopChallenge(resp.Header)
	if !ok || p["error"] != "use_dpop_nonce" {
		return false
	}
	return s.dpop.noteNonce(endpoint, resp.Header)
}

// dpopChallenge returns the parameters of the DPoP challenge of h, if any.
func dpopChallenge(h http.Header) (map[string]string, bool) {
	for _, c := range mcp.ParseWWWAuthenticate(h) {
		if strings.EqualFold(c.Scheme, "DPoP") {
			return c.Params, true
		}
	}
	return nil, false
}
