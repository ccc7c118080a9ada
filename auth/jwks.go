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
	"net/url"
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
// per minInterval). Concurrent refreshes share one fetch (single flight).
//
// The fetch belongs to no caller: it runs on its own goroutine, with the
// context of the request that started it stripped of its cancellation
// (context.WithoutCancel) and bounded by the fetch timeout, while every
// caller, the first included, waits for it or for its own context. A client
// that goes away therefore neither cancels the fetch nor fails it for the
// others; the fetch outlives that request by at most the fetch timeout.
// Only a fetch that completed counts as an attempt for the intervals.
type keySet struct {
	iss      *issuer
	maxBytes int64
	maxKeys  int

	mu        sync.Mutex
	keys      []verifyKey
	fetched   time.Time // start of the last successful fetch
	attempted time.Time // start of the last completed fetch
	failed    bool      // whether the last completed fetch failed
	jwksURL   string    // resolved jwks_uri
	flight    *fetchFlight
}

type fetchFlight struct {
	done chan struct{}
	err  error
}

// jwksColdRetry is the least time between fetches while the issuer's keys
// were never fetched (capped by JWKSMinInterval). No token of the issuer
// verifies until a fetch succeeds, so retrying soon is what recovers from a
// blip, and once a second per instance costs a failing server little.
const jwksColdRetry = time.Second

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
	interval := ks.iss.jwksMinInterval
	if never && ks.failed {
		interval = min(interval, jwksColdRetry)
	}
	due := ks.attempted.IsZero() || now.Sub(ks.attempted) >= interval
	inFlight := ks.flight != nil
	ks.mu.Unlock()
	switch {
	case len(found) > 0 && (!stale || !due || inFlight):
		return found, nil // fresh; or stale while a fetch is recent or under way
	case !due && !inFlight && never:
		return nil, fmt.Errorf("%w: no JWKS yet; the last fetch failed", errUnavailable)
	case !due && !inFlight:
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

// refresh fetches the JWKS once for all concurrent callers: it joins the
// fetch in flight or starts one, then waits for it or for ctx.
func (ks *keySet) refresh(ctx context.Context, now time.Time) error {
	ks.mu.Lock()
	f := ks.flight
	if f == nil {
		f = &fetchFlight{done: make(chan struct{})}
		ks.flight = f
		jwksURL := ks.jwksURL
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.iss.fetchTimeout)
		go func() {
			defer cancel()
			keys, resolved, err := ks.fetch(fctx, jwksURL)
			ks.mu.Lock()
			ks.attempted, ks.failed = now, err != nil
			if err == nil {
				ks.keys, ks.fetched, ks.jwksURL = keys, now, resolved
			}
			ks.flight = nil
			f.err = err
			ks.mu.Unlock()
			close(f.done)
		}()
	}
	ks.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("%w: gave up waiting for the JWKS: %v", errUnavailable, ctx.Err())
	}
}

// fetch resolves the jwks_uri (configured or from the issuer's metadata) and
// downloads the key set, within ctx's deadline.
func (ks *keySet) fetch(ctx context.Context, jwksURL string) ([]verifyKey, string, error) {
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
// configured one (RFC 8414 §3.3), and its jwks_uri must pass discoveredURL.
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
		if !discoveredURL(ks.iss.name, md.JWKSURI) {
			// A definite answer of this document: the other discovery URLs
			// are not tried.
			return "", fmt.Errorf("%w: metadata %s: jwks_uri %q refused: it must be an https URL (plain http only on loopback, for a plain-http loopback issuer)",
				errUnavailable, u, md.JWKSURI)
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

// discoveredURL reports whether u, an endpoint named by the metadata of
// issuer iss, may be used: an absolute https URL, or plain http on a
// loopback host, the rule of configured URLs (secureOrLoopback), and plain
// http only when the issuer itself is a plain-http loopback URL (a local
// test server). So the metadata of a remote issuer can neither send key
// requests in clear over the network nor point them at the resource's own
// loopback services.
func discoveredURL(iss, u string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || pu.User != nil || !secureOrLoopback(pu) {
		return false
	}
	if pu.Scheme == "https" {
		return true
	}
	iu, err := url.Parse(iss)
	return err == nil && iu.Scheme == "http" && secureOrLoopback(iu)
}

// get fetches u with a size bound; a redirect is a failure (see
// noRedirects).
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
		return nil, statusError("GET", u, resp)
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

// statusError is the failure of a request to the authorization server
// answered with resp's status other than 200. A redirect is named as one:
// the resource follows none (noRedirects).
func statusError(method, u string, resp *http.Response) error {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fmt.Errorf("%w: %s %s: redirect (status %d to %q) not followed: configure the final URL",
			errUnavailable, method, u, resp.StatusCode, resp.Header.Get("Location"))
	}
	return fmt.Errorf("%w: %s %s: status %d", errUnavailable, method, u, resp.StatusCode)
}
