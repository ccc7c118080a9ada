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
	max      int
	maxBytes int64

	mu    sync.Mutex
	cache map[[32]byte]cachedIntrospection
}

type cachedIntrospection struct {
	c       *claims
	expires time.Time
}

// lookup returns the cached claims of tok, or nil.
func (in *introspector) lookup(key [32]byte, now time.Time) *claims {
	in.mu.Lock()
	defer in.mu.Unlock()
	e, ok := in.cache[key]
	if !ok {
		return nil
	}
	if !now.Before(e.expires) {
		delete(in.cache, key)
		return nil
	}
	return e.c
}

// store caches c for tok until expires, evicting expired entries (and, when
// still full, arbitrary ones) to stay within the bound.
func (in *introspector) store(key [32]byte, c *claims, expires time.Time, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cache == nil {
		in.cache = make(map[[32]byte]cachedIntrospection)
	}
	if len(in.cache) >= in.max {
		for k, e := range in.cache {
			if !now.Before(e.expires) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < in.max {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[key] = cachedIntrospection{c: c, expires: expires}
}

// introspect returns the claims of an active token, nil for an inactive one,
// or an errUnavailable error when the endpoint cannot answer.
func (in *introspector) introspect(ctx context.Context, tok string, now time.Time) (*claims, error) {
	key := sha256.Sum256([]byte(tok))
	if c := in.lookup(key, now); c != nil {
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
	if expires.After(now) {
		in.store(key, c, expires, now)
	}
	return c, nil
}
