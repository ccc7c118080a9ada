package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// verifyKey is one usable public key of a JWKS.
type verifyKey struct {
	kid string
	alg string // the key's "alg", or "" when unrestricted
	raw any    // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// keyFits reports whether alg is an asymmetric signature algorithm the key
// can verify: RSA keys for RS*/PS*, EC keys of the matching curve for ES*,
// Ed25519 keys for EdDSA. A key whose JWK names an alg only verifies that
// alg. This refuses algorithm confusion (HS256 with a public key, "none").
func (k *verifyKey) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		pk, ok := k.raw.(*rsa.PublicKey)
		return ok && pk.N.BitLen() >= 2048
	case "ES256":
		pk, ok := k.raw.(*ecdsa.PublicKey)
		return ok && pk.Curve == elliptic.P256()
	case "ES384":
		pk, ok := k.raw.(*ecdsa.PublicKey)
		return ok && pk.Curve == elliptic.P384()
	case "ES512":
		pk, ok := k.raw.(*ecdsa.PublicKey)
		return ok && pk.Curve == elliptic.P521()
	case "EdDSA":
		_, ok := k.raw.(ed25519.PublicKey)
		return ok
	}
	return false
}

// keySet caches an issuer's JWKS. It is refreshed lazily on the request path:
// when older than ttl, and when a token names an unknown kid (at most once
// per minInterval). Concurrent refreshes share one fetch (single flight); the
// fetch runs on the goroutine of the request that started it, so nothing
// outlives a request.
type keySet struct {
	iss      *issuer
	maxBytes int64
	maxKeys  int

	mu        sync.Mutex
	keys      []verifyKey
	fetched   time.Time // last successful fetch
	attempted time.Time // last fetch attempt
	jwksURL   string    // resolved jwks_uri
	flight    *fetchFlight
}

type fetchFlight struct {
	done chan struct{}
	err  error
}

// errUnavailable marks failures of the authorization server (a JWKS or
// metadata fetch, introspection): answered with 503, never invalid_token.
var errUnavailable = errors.New("authorization server unavailable")

// lookup returns the keys to try for kid and alg, refreshing the set when it
// is stale or kid is unknown. It returns an errUnavailable error when a fetch
// it needs fails and no usable cached keys remain.
func (ks *keySet) lookup(ctx context.Context, kid, alg string, now time.Time) ([]verifyKey, error) {
	ks.mu.Lock()
	never := ks.fetched.IsZero()
	stale := never || now.Sub(ks.fetched) >= ks.iss.jwksTTL
	found := ks.matchLocked(kid, alg)
	mayRetry := ks.attempted.IsZero() || now.Sub(ks.attempted) >= ks.iss.jwksMinInterval
	ks.mu.Unlock()
	switch {
	case len(found) > 0 && (!stale || !mayRetry):
		return found, nil // fresh, or stale while a recent fetch failed
	case !mayRetry && never:
		return nil, fmt.Errorf("%w: no JWKS yet; the last fetch failed", errUnavailable)
	case !mayRetry:
		return nil, nil // unknown kid, refetched recently
	}
	if err := ks.refresh(ctx, now); err != nil {
		if len(found) > 0 {
			return found, nil // serve stale keys while the issuer is down
		}
		return nil, err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.matchLocked(kid, alg), nil
}

// matchLocked returns the keys that may verify a token with kid and alg.
func (ks *keySet) matchLocked(kid, alg string) []verifyKey {
	var out []verifyKey
	for i := range ks.keys {
		k := &ks.keys[i]
		if (kid == "" || k.kid == kid) && k.fits(alg) {
			out = append(out, *k)
		}
	}
	return out
}

// refresh fetches the JWKS once for all concurrent callers.
func (ks *keySet) refresh(ctx context.Context, now time.Time) error {
	ks.mu.Lock()
	if f := ks.flight; f != nil {
		ks.mu.Unlock()
		select {
		case <-f.done:
			return f.err
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", errUnavailable, ctx.Err())
		}
	}
	f := &fetchFlight{done: make(chan struct{})}
	ks.flight = f
	ks.attempted = now
	jwksURL := ks.jwksURL
	ks.mu.Unlock()

	keys, resolved, err := ks.fetch(ctx, jwksURL)
	ks.mu.Lock()
	if err == nil {
		ks.keys, ks.fetched, ks.jwksURL = keys, now, resolved
	}
	ks.flight = nil
	ks.mu.Unlock()
	f.err = err
	close(f.done)
	return err
}

// fetch resolves the jwks_uri (configured or from the issuer's metadata) and
// downloads the key set.
func (ks *keySet) fetch(ctx context.Context, jwksURL string) ([]verifyKey, string, error) {
	ctx, cancel := context.WithTimeout(ctx, ks.iss.fetchTimeout)
	defer cancel()
	if jwksURL == "" {
		u, err := ks.discover(ctx)
		if err != nil {
			return nil, "", err
		}
		jwksURL = u
	}
	body, err := ks.get(ctx, jwksURL)
	if err != nil {
		return nil, "", err
	}
	set, err := jwk.Parse(body)
	if err != nil {
		return nil, "", fmt.Errorf("%w: JWKS: %v", errUnavailable, err)
	}
	var keys []verifyKey
	for i := 0; i < set.Len() && len(keys) < ks.maxKeys; i++ {
		k, _ := set.Key(i)
		if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
			continue
		}
		if k.KeyType() == jwa.OctetSeq {
			continue // symmetric keys never verify access tokens here
		}
		var raw any
		if err := k.Raw(&raw); err != nil {
			continue
		}
		vk := verifyKey{kid: k.KeyID(), raw: raw}
		if a := k.Algorithm(); a != nil {
			vk.alg = a.String()
		}
		switch pk := raw.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			_ = pk
			keys = append(keys, vk)
		}
	}
	return keys, jwksURL, nil
}

// discover reads the issuer's RFC 8414 metadata, then OpenID Connect
// discovery, and returns its jwks_uri. The document's issuer must equal the
// configured one (RFC 8414 §3.3).
func (ks *keySet) discover(ctx context.Context) (string, error) {
	var lastErr error
	for _, u := range metadataURLs(ks.iss.name) {
		body, err := ks.get(ctx, u)
		if err != nil {
			lastErr = err
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &md); err != nil {
			lastErr = fmt.Errorf("%w: metadata %s: %v", errUnavailable, u, err)
			continue
		}
		if md.Issuer != ks.iss.name || md.JWKSURI == "" {
			lastErr = fmt.Errorf("%w: metadata %s names issuer %q and jwks_uri %q", errUnavailable, u, md.Issuer, md.JWKSURI)
			continue
		}
		return md.JWKSURI, nil
	}
	return "", lastErr
}

// metadataURLs lists the discovery URLs of an issuer (2026-07-28
// basic/authorization §Authorization Server Metadata Discovery): RFC 8414
// path insertion, then OIDC path insertion and appending for issuers with a
// path; RFC 8414 and OIDC at the root otherwise.
func metadataURLs(iss string) []string {
	i := strings.Index(iss, "://")
	if i < 0 {
		return nil
	}
	rest := iss[i+3:]
	j := strings.IndexByte(rest, '/')
	origin, path := iss, ""
	if j >= 0 {
		origin, path = iss[:i+3+j], strings.TrimSuffix(rest[j:], "/")
	}
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

// get fetches u with a size bound.
func (ks *keySet) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.iss.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("%w: GET %s: status %d", errUnavailable, u, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, ks.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %v", errUnavailable, u, err)
	}
	if int64(len(b)) > ks.maxBytes {
		return nil, fmt.Errorf("%w: GET %s: larger than %d bytes", errUnavailable, u, ks.maxBytes)
	}
	return b, nil
}
