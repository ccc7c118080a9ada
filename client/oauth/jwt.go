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
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
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

// signJWT signs claims as a compact JWS with key (see signJWS), typ JWT.
func signJWT(key crypto.Signer, kid string, claims map[string]any) (string, error) {
	hdr := map[string]any{"typ": "JWT"}
	if kid != "" {
		hdr["kid"] = kid
	}
	return signJWS(key, hdr, claims)
}

// jwsAlg is the JWS algorithm (RFC 7518 §3.1, RFC 8037 §3.1) this package
// signs with key: ES256/384/512 for ECDSA keys by curve, RS256 for RSA
// keys, EdDSA for Ed25519 keys.
func jwsAlg(key crypto.Signer) (string, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", errors.New("oauth: unsupported ECDSA curve")
	case *rsa.PrivateKey:
		return "RS256", nil
	case ed25519.PrivateKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("oauth: unsupported signing key %T", key)
}

// signJWS signs claims as a compact JWS with key, its header hdr plus the
// alg of jwsAlg.
func signJWS(key crypto.Signer, hdr map[string]any, claims map[string]any) (string, error) {
	alg, err := jwsAlg(key)
	if err != nil {
		return "", err
	}
	hdr["alg"] = alg
	hb, err := json.Marshal(hdr)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var sig []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	case *ecdsa.PrivateKey:
		var digest []byte
		switch alg {
		case "ES256":
			d := sha256.Sum256([]byte(input))
			digest = d[:]
		case "ES384":
			d := sha512.Sum384([]byte(input))
			digest = d[:]
		default:
			d := sha512.Sum512([]byte(input))
			digest = d[:]
		}
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
		d := sha256.Sum256([]byte(input))
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:]); err != nil {
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
	case ed25519.PrivateKey:
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
		tr, _, err := src.postForm(ctx, "token-exchange", tokenEndpoint, form, basic, false)
		if err != nil {
			return "", err
		}
		if tr.IssuedTokenType != TokenTypeIDJAG {
			return "", fmt.Errorf("oauth: token exchange issued %q, not an ID-JAG", tr.IssuedTokenType)
		}
		return tr.AccessToken, nil
	}
}

// maxAssertionBytes bounds an assertion read by AssertionFile.
const maxAssertionBytes = 64 << 10

// AssertionFile returns a Config.Assertion for workload identity
// federation (MCP SEP-1933): the JWT in the file at path, which the
// workload's platform issues and renews (a Kubernetes projected service
// account token, a cloud's identity token file), is the RFC 7523 §2.1
// assertion of the GrantJWTBearer grant. The file is read anew for every
// token, so a renewed JWT is used; surrounding white space is dropped, and
// a file larger than 64 KiB or empty is an error.
func AssertionFile(path string) func(ctx context.Context, req AssertionRequest) (string, error) {
	return func(context.Context, AssertionRequest) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("oauth: assertion: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxAssertionBytes+1))
		if err != nil {
			return "", fmt.Errorf("oauth: assertion: %w", err)
		}
		if len(b) > maxAssertionBytes {
			return "", fmt.Errorf("oauth: assertion: %s is larger than %d bytes", path, maxAssertionBytes)
		}
		a := strings.TrimSpace(string(b))
		if a == "" {
			return "", fmt.Errorf("oauth: assertion: %s is empty", path)
		}
		return a, nil
	}
}
