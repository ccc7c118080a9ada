package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// introspector asks an RFC 7662 endpoint about tokens and caches the answers
// by the SHA-256 of the token, each until the earlier of the token's exp and
// the configured TTL.
type introspector struct {
	iss      *issuer
	endpoint string
	id       string
	secret   string
	ttl      time.Duration
	maxBytes int64
	cache    tokenCache
}

// tokenCache maps SHA-256 digests of tokens to their verified claims, each
// until an expiry, holding at most max entries.
type tokenCache struct {
	max int // <= 0: disabled

	mu sync.Mutex
	m  map[[32]byte]cachedClaims
}

type cachedClaims struct {
	c       *claims
	expires time.Time
}

// get returns the cached claims of key, or nil.
func (tc *tokenCache) get(key [32]byte, now time.Time) *claims {
	if tc.max <= 0 {
		return nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.m[key]
	if !ok {
		return nil
	}
	if !now.Before(e.expires) {
		delete(tc.m, key)
		return nil
	}
	return e.c
}

// put caches c until expires, evicting expired entries (and, when still
// full, arbitrary ones) to stay within the bound.
func (tc *tokenCache) put(key [32]byte, c *claims, expires, now time.Time) {
	if tc.max <= 0 || !expires.After(now) {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.m == nil {
		tc.m = make(map[[32]byte]cachedClaims)
	}
	if len(tc.m) >= tc.max {
		for k, e := range tc.m {
			if !now.Before(e.expires) {
				delete(tc.m, k)
			}
		}
		for k := range tc.m {
			if len(tc.m) < tc.max {
				break
			}
			delete(tc.m, k)
		}
	}
	tc.m[key] = cachedClaims{c: c, expires: expires}
}

func (tc *tokenCache) len() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return len(tc.m)
}

// introspect returns the claims of an active token, nil for an inactive one,
// or an errUnavailable error when the endpoint cannot answer.
func (in *introspector) introspect(ctx context.Context, tok string, now time.Time) (*claims, error) {
	key := sha256.Sum256([]byte(tok))
	if c := in.cache.get(key, now); c != nil {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, in.iss.fetchTimeout)
	defer cancel()
	form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// client_secret_basic (RFC 6749 §2.3.1): id and secret form-urlencoded.
	req.SetBasicAuth(url.QueryEscape(in.id), url.QueryEscape(in.secret))
	resp, err := in.iss.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", errUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("%w: introspection: status %d", errUnavailable, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, in.maxBytes+1))
	if err != nil || int64(len(b)) > in.maxBytes {
		return nil, fmt.Errorf("%w: introspection: unreadable or oversized response", errUnavailable)
	}
	c, err := parseClaims(b, in.iss.names)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", errUnavailable, err)
	}
	if !c.active {
		return nil, nil
	}
	if c.iss == "" {
		c.iss = in.iss.name
	}
	expires := now.Add(in.ttl)
	if c.hasExp && c.exp.Before(expires) {
		expires = c.exp
	}
	in.cache.put(key, c, expires, now)
	return c, nil
}
