package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// signAssertion builds the private_key_jwt client assertion of RFC 7523
// §2.2 / §3: iss = sub = client_id, aud = the authorization server's issuer,
// a short exp, a random jti.
func signAssertion(c Client, audience string, now time.Time) (string, error) {
	claims := map[string]any{
		"iss": c.ID,
		"sub": c.ID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": randomString(16),
	}
	return signJWT(c.Key, c.KeyID, claims)
}

// signJWT signs claims as a compact JWS with key: ES256/384/512 for ECDSA
// keys by curve, RS256 for RSA keys.
func signJWT(key crypto.Signer, kid string, claims map[string]any) (string, error) {
	var alg string
	var h crypto.Hash
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			alg, h = "ES256", crypto.SHA256
		case elliptic.P384():
			alg, h = "ES384", crypto.SHA384
		case elliptic.P521():
			alg, h = "ES512", crypto.SHA512
		default:
			return "", errors.New("oauth: unsupported ECDSA curve")
		}
	case *rsa.PrivateKey:
		alg, h = "RS256", crypto.SHA256
	default:
		return "", fmt.Errorf("oauth: unsupported signing key %T", key)
	}
	hdr := map[string]string{"alg": alg, "typ": "JWT"}
	if kid != "" {
		hdr["kid"] = kid
	}
	hb, _ := json.Marshal(hdr)
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var digest []byte
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256([]byte(input))
		digest = d[:]
	case crypto.SHA384:
		d := sha512.Sum384([]byte(input))
		digest = d[:]
	default:
		d := sha512.Sum512([]byte(input))
		digest = d[:]
	}
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return "", err
		}
		// JWS (RFC 7518 §3.4): R and S as fixed-size big-endian octets.
		n := (k.Curve.Params().BitSize + 7) / 8
		sig = make([]byte, 2*n)
		r.FillBytes(sig[:n])
		s.FillBytes(sig[n:])
	case *rsa.PrivateKey:
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, h, digest); err != nil {
			return "", err
		}
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// ParsePrivateKeyPEM parses a PEM "PRIVATE KEY" (PKCS #8), "EC PRIVATE
// KEY" or "RSA PRIVATE KEY" block into a signer for Client.Key.
func ParsePrivateKeyPEM(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("oauth: no PEM block")
	}
	var k any
	var err error
	switch blk.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: private key: %w", err)
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("oauth: unsupported private key %T", k)
}

// Token types of RFC 8693 §3 and the ID-JAG draft.
const (
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
	grantTokenExch   = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// IdP describes the enterprise identity provider for IDJAG.
type IdP struct {
	// Issuer is the identity provider's issuer identifier (https, or http
	// on a loopback host). When set, its token endpoint and
	// authentication methods come from its metadata, found at the RFC
	// 8414 §3 and OpenID Connect Discovery well-known URLs and used only
	// if its issuer is Issuer exactly (RFC 8414 §3.3); TokenEndpoint is
	// then ignored. The metadata is fetched once, and again after a
	// failure.
	Issuer string
	// TokenEndpoint is the IdP's token endpoint (https or loopback http),
	// for an IdP named without Issuer.
	TokenEndpoint string
	ClientID      string // this client at the IdP
	ClientSecret  string // if the IdP wants one
	// AuthMethod is how ClientSecret is sent (RFC 6749 §2.3.1):
	// AuthClientSecretBasic or AuthClientSecretPost. "" means
	// client_secret_basic when the metadata of Issuer lists it in
	// token_endpoint_auth_methods_supported or lists none (RFC 8414 §2's
	// default), client_secret_post when it lists only that, and
	// client_secret_post with a TokenEndpoint (no metadata to ask).
	AuthMethod string
	// IDToken returns the user's ID token at the IdP (the subject token).
	IDToken    func(ctx context.Context) (string, error)
	HTTPClient *http.Client // nil: http.DefaultTransport; redirects not followed; DefaultRequestTimeout per request
}

// IDJAG returns a Config.Assertion that obtains an ID-JAG from idp by
// token exchange (RFC 8693): the user's ID token for an
// urn:ietf:params:oauth:token-type:id-jag whose audience is the
// authorization server and whose resource is the MCP server. An IdP
// found by Issuer whose metadata lists grant_types_supported without the
// token exchange grant, or token_endpoint_auth_methods_supported without
// the method AuthMethod names, is refused before the ID token is sent.
func IDJAG(idp IdP) func(ctx context.Context, req AssertionRequest) (string, error) {
	src := New(&Config{HTTPClient: idp.HTTPClient})
	// The IdP is configured, not learned from a server: it may be
	// anywhere (https, or http on a loopback host).
	src.local = true
	var (
		mu   sync.Mutex
		meta *ServerMetadata
	)
	endpoint := func(ctx context.Context) (string, string, error) {
		if idp.Issuer == "" {
			m := idp.AuthMethod
			if m == "" {
				m = AuthClientSecretPost
			}
			return idp.TokenEndpoint, m, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if meta == nil {
			m, err := src.fetchServerMetadata(ctx, idp.Issuer)
			if err != nil {
				return "", "", fmt.Errorf("oauth: identity provider: %w", err)
			}
			meta = m
		}
		if g := meta.GrantTypesSupported; len(g) > 0 && !contains(g, grantTokenExch) {
			return "", "", fmt.Errorf("oauth: identity provider %s does not support token exchange", idp.Issuer)
		}
		sup, m := meta.TokenEndpointAuthMethodsSupported, idp.AuthMethod
		if m == "" {
			m = AuthClientSecretBasic
			if len(sup) > 0 && !contains(sup, AuthClientSecretBasic) && contains(sup, AuthClientSecretPost) {
				m = AuthClientSecretPost
			}
		}
		if idp.ClientSecret != "" && len(sup) > 0 && !contains(sup, m) {
			return "", "", fmt.Errorf("oauth: identity provider %s does not accept %s", idp.Issuer, m)
		}
		return meta.TokenEndpoint, m, nil
	}
	return func(ctx context.Context, req AssertionRequest) (string, error) {
		if idp.IDToken == nil {
			return "", errors.New("oauth: IdP.IDToken is nil")
		}
		tokenEndpoint, method, err := endpoint(ctx)
		if err != nil {
			return "", err
		}
		idt, err := idp.IDToken(ctx)
		if err != nil {
			return "", err
		}
		form := url.Values{
			"grant_type":           {grantTokenExch},
			"requested_token_type": {TokenTypeIDJAG},
			"audience":             {req.Issuer},
			"resource":             {req.Resource},
			"subject_token":        {idt},
			"subject_token_type":   {TokenTypeIDToken},
		}
		if idp.ClientSecret == "" {
			method = AuthNone
		}
		basic, err := src.authenticate(Client{ID: idp.ClientID, Secret: idp.ClientSecret, AuthMethod: method}, &ServerMetadata{}, form)
		if err != nil {
			return "", err
		}
		if len(req.Scopes) > 0 {
			form.Set("scope", strings.Join(req.Scopes, " "))
		}
		tr, err := src.postForm(ctx, "token-exchange", tokenEndpoint, form, basic)
		if err != nil {
			return "", err
		}
		if tr.IssuedTokenType != TokenTypeIDJAG {
			return "", fmt.Errorf("oauth: token exchange issued %q, not an ID-JAG", tr.IssuedTokenType)
		}
		return tr.AccessToken, nil
	}
}
