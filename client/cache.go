package client

import (
	"container/list"
	"encoding/json"
	"strings"
	"sync"
	"time"
	"unique"
)

// cache holds complete results of the cacheable 2026-07-28 operations
// (2026-07-28 server/utilities/caching): server/discover, the list methods
// and resources/read, per endpoint. A Client's Conns share it. A result is
// fresh while now < received + ttlMs (absent or negative ttlMs: 0), capped
// by MaxTTL. "public" results are shared; any other scope is private to the
// credential source that got it (credSource): the Client's TokenSource, its
// static Authorization header, or no credential. Only requests without a
// credential of their own use the cache, so no other credential ever reads
// or writes it. A successful challenge (a new authorization: new scopes,
// maybe a new user) drops the private entries of every endpoint (the token
// source is the Client's) and moves to a new generation, so that an answer
// to a request sent before it is not stored. Bounded by an LRU. Safe for
// concurrent use.
type cache struct {
	mu     sync.Mutex
	max    int
	maxTTL time.Duration
	ll     *list.List
	items  map[cacheKeyT]*list.Element
	// hasPrivate: some entry is private (saves a lookup in public-only
	// caches).
	hasPrivate bool
	// gen counts the drops of private entries.
	gen uint64
}

// credSource names the credential a request carries, for the cache.
type credSource uint8

const (
	credNone   credSource = iota + 1 // no Authorization
	credStatic                       // the Authorization of Options.Header
	credToken                        // a token of Options.TokenSource
)

// endpoint is an endpoint URL as the cache keys it: interned, so that a
// key hashes and compares a pointer rather than the URL (the Conn interns
// it once).
type endpoint = unique.Handle[string]

// cacheKeyT: endpoint, method, target, and for private entries the
// credential source; scope 0 means public.
type cacheKeyT struct {
	endpoint       endpoint
	method, target string
	scope          credSource
}

type cacheEntry struct {
	key     cacheKeyT // its target is the cursor ("c:" + cursor) or the URI
	private bool
	expires time.Time
	result  json.RawMessage
}

func newCache(max int, maxTTL time.Duration) *cache {
	return &cache{max: max, maxTTL: maxTTL, ll: list.New(), items: map[cacheKeyT]*list.Element{}}
}

// generation returns the current generation of private entries.
func (c *cache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get returns a fresh result of endpoint: the public entry, else the
// private one of src.
func (c *cache) get(ep endpoint, method, target string, src credSource) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, scope := range [2]credSource{0, src} {
		if scope != 0 && !c.hasPrivate {
			break
		}
		k := cacheKeyT{endpoint: ep, method: method, target: target, scope: scope}
		if el, ok := c.items[k]; ok {
			e := el.Value.(*cacheEntry)
			if now.Before(e.expires) {
				c.ll.MoveToFront(el)
				return e.result, true
			}
			c.ll.Remove(el)
			delete(c.items, k)
		}
	}
	return nil, false
}

// put stores a result of endpoint and credential source src by its ttlMs
// and cacheScope; a private result is dropped if the generation moved on
// since gen (the request was sent before a challenge).
func (c *cache) put(ep endpoint, method, target string, src credSource, gen uint64, result json.RawMessage) {
	var h struct {
		TTL   *json.Number `json:"ttlMs"`
		Scope string       `json:"cacheScope"`
	}
	if json.Unmarshal(result, &h) != nil || h.TTL == nil {
		return // absent ttlMs: stale at once
	}
	ms, err := h.TTL.Float64()
	if err != nil || ms <= 0 {
		return
	}
	ttl := time.Duration(ms * float64(time.Millisecond))
	if ttl > c.maxTTL || ms > float64(c.maxTTL/time.Millisecond) {
		ttl = c.maxTTL
	}
	// Anything but "public" is treated as private: never shared by mistake.
	private := h.Scope != "public"
	k := cacheKeyT{endpoint: ep, method: method, target: target}
	if private {
		k.scope = src
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if private && gen != c.gen {
		return
	}
	e := &cacheEntry{key: k, private: private, expires: time.Now().Add(ttl), result: result}
	if private {
		c.hasPrivate = true
	}
	if el, ok := c.items[k]; ok {
		el.Value = e
		c.ll.MoveToFront(el)
		return
	}
	c.items[k] = c.ll.PushFront(e)
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cacheEntry).key)
	}
}

// drop removes entries matching f.
func (c *cache) drop(f func(*cacheEntry) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(f)
}

func (c *cache) dropLocked(f func(*cacheEntry) bool) {
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*cacheEntry); f(e) {
			c.ll.Remove(el)
			delete(c.items, e.key)
		}
		el = next
	}
}

// dropMethod drops every page of method of endpoint, or only target's
// entry when target is set (resources/updated names a URI; sub-resources go
// too).
func (c *cache) dropMethod(ep endpoint, method, target string) {
	c.drop(func(e *cacheEntry) bool {
		k := e.key
		return k.endpoint == ep && k.method == method && (target == "" || k.target == target || strings.HasPrefix(k.target, target))
	})
}

// dropPrivate drops the private entries and starts a new generation.
func (c *cache) dropPrivate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.dropLocked(func(e *cacheEntry) bool { return e.private })
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
