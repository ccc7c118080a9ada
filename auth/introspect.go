package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// introspector asks an RFC 7662 endpoint about tokens. It caches the
// answers by the SHA-256 of the token: active ones until the earlier of the
// token's exp and ttl, inactive ones for negTTL, in two caches so that a
// flood of unknown tokens evicts only inactive answers. Concurrent requests
// with one token share one introspection (single flight), and at most
// cap(slots) introspections are in flight at once; beyond that a request
// gets errBusy (503) without calling the endpoint.
//
// Like a JWKS fetch, an introspection belongs to no caller: it runs on its
// own goroutine with the starting request's context stripped of its
// cancellation and bounded by the fetch timeout, and each caller waits for
// it or for its own context. A client that goes away neither cancels it for
// the others nor leaves its answer unused; the slot bound also bounds these
// goroutines.
type introspector struct {
	iss      *issuer
	endpoint string
	id       string
	secret   string
	ttl      time.Duration
	negTTL   time.Duration
	maxBytes int64
	cache    tokenCache // active answers
	neg      tokenCache // inactive answers (entries without claims)
	slots    chan struct{}

	mu      sync.Mutex
	flights map[[32]byte]*introFlight
}

// introFlight is an introspection in flight.
type introFlight struct {
	done chan struct{}
	c    *claims
	err  error
}

// errBusy: the bound on concurrent introspections is reached.
var errBusy = fmt.Errorf("%w: too many introspections in flight", errUnavailable)

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

// has reports whether key has an unexpired entry (with or without claims).
func (tc *tokenCache) has(key [32]byte, now time.Time) bool {
	if tc.max <= 0 {
		return false
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.m[key]
	return ok && now.Before(e.expires)
}

// evictScan bounds the entries put examines to make room in a full cache,
// so that a flood of new entries costs each insertion constant work.
const evictScan = 32

// put caches c until expires. When the cache is full it drops the expired
// entries among the first evictScan it meets (map order is random), then,
// while still full, arbitrary ones.
func (tc *tokenCache) put(key [32]byte, c *claims, expires, now time.Time) {
	if tc.max <= 0 || !expires.After(now) {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.m == nil {
		tc.m = make(map[[32]byte]cachedClaims)
	}
	if _, ok := tc.m[key]; !ok && len(tc.m) >= tc.max {
		n := 0
		for k, e := range tc.m {
			if !now.Before(e.expires) {
				delete(tc.m, k)
			}
			if n++; n >= evictScan {
				break
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

// introspect returns the claims of an active access token, nil for an
// inactive one (or one that is not an access token), or an errUnavailable
// error when the endpoint cannot answer, the bound on concurrent
// introspections is reached, or ctx ends first. key is the SHA-256 of tok.
func (in *introspector) introspect(ctx context.Context, tok string, key [32]byte, now time.Time) (*claims, error) {
	if c := in.cache.get(key, now); c != nil {
		return c, nil
	}
	if in.neg.has(key, now) {
		return nil, nil
	}
	in.mu.Lock()
	f := in.flights[key]
	if f == nil {
		// Again under mu: a flight that just ended filled a cache before
		// leaving flights.
		if c := in.cache.get(key, now); c != nil {
			in.mu.Unlock()
			return c, nil
		}
		if in.neg.has(key, now) {
			in.mu.Unlock()
			return nil, nil
		}
		select {
		case in.slots <- struct{}{}:
		default:
			in.mu.Unlock()
			return nil, errBusy
		}
		f = &introFlight{done: make(chan struct{})}
		in.flights[key] = f
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.iss.fetchTimeout)
		go func() {
			defer cancel()
			c, err := in.call(fctx, tok)
			switch {
			case err != nil:
				// Never remembered: an outage is not an answer.
			case c == nil:
				in.neg.put(key, nil, now.Add(in.negTTL), now)
			default:
				expires := now.Add(in.ttl)
				if c.hasExp && c.exp.Before(expires) {
					expires = c.exp
				}
				in.cache.put(key, c, expires, now)
			}
			in.mu.Lock()
			delete(in.flights, key)
			in.mu.Unlock()
			<-in.slots
			f.c, f.err = c, err
			close(f.done)
		}()
	}
	in.mu.Unlock()
	select {
	case <-f.done:
		return f.c, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: gave up waiting for introspection: %v", errUnavailable, ctx.Err())
	}
}

// call asks the endpoint about tok (RFC 7662 §2.1), within ctx's deadline.
func (in *introspector) call(ctx context.Context, tok string) (*claims, error) {
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
		return nil, statusError("POST", in.endpoint, resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, in.maxBytes+1))
	if err != nil || int64(len(b)) > in.maxBytes {
		return nil, fmt.Errorf("%w: introspection: unreadable or oversized response", errUnavailable)
	}
	c, err := parseClaims(b, in.iss.names)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", errUnavailable, err)
	}
	if !c.active || !accessToken(c.all) {
		return nil, nil
	}
	if c.iss == "" {
		c.iss = in.iss.name
	}
	return c, nil
}

// accessToken reports whether an active introspection answer describes an
// access token. RFC 7662 §2.2's token_type is OPTIONAL and, per RFC 6749
// §5.1, case-insensitive: absent or "Bearer" is accepted, and so is
// "access_token" (RFC 7009's token type hint, which some servers answer
// here). "DPoP" is accepted when the answer binds the token to a key with
// cnf.jkt (RFC 9449 §6.2): Authenticate then demands the token with the
// DPoP scheme and a proof of that key, and refuses it as a bearer token
// (§7.2); without cnf.jkt there is no key to check a proof against.
// Anything else ("refresh_token", "N_A" of RFC 8693, or a value that is
// not a string) is refused. Some servers say the same with token_use: when
// present it must be "access_token" or "access".
func accessToken(all map[string]json.RawMessage) bool {
	if v, ok := all["token_type"]; ok {
		var t string
		if json.Unmarshal(v, &t) != nil {
			return false
		}
		switch {
		case strings.EqualFold(t, "bearer"), strings.EqualFold(t, "access_token"):
		case strings.EqualFold(t, "dpop"):
			if jkt, ok := tokenJKT(all); !ok || jkt == "" {
				return false
			}
		default:
			return false
		}
	}
	if v, ok := all["token_use"]; ok {
		var u string
		if json.Unmarshal(v, &u) != nil || u != "access_token" && u != "access" {
			return false
		}
	}
	return true
}
