package client

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// cache holds complete results of the cacheable 2026-07-28 operations
// (2026-07-28 server/utilities/caching): server/discover, the list methods
// and resources/read. A result is fresh while now < received + ttlMs
// (absent or negative ttlMs: 0), capped by MaxTTL. "private" results are
// keyed by the access token, "public" ones are shared. Bounded by an LRU.
type cache struct {
	mu     sync.Mutex
	max    int
	maxTTL time.Duration
	now    func() time.Time
	ll     *list.List
	items  map[cacheKeyT]*list.Element
	// hasPrivate: some entry is private (saves hashing the token on
	// lookups in public-only caches).
	hasPrivate bool
}

// cacheKeyT: method, target, and for private entries a digest of the
// token (never the token itself); the zero digest means public.
type cacheKeyT struct {
	method, target string
	private        bool
	token          [16]byte
}

type cacheEntry struct {
	key     cacheKeyT
	method  string
	target  string // cursor or uri
	private bool
	expires time.Time
	result  json.RawMessage
}

func newCache(max int, maxTTL time.Duration, now func() time.Time) *cache {
	return &cache{max: max, maxTTL: maxTTL, now: now, ll: list.New(), items: map[cacheKeyT]*list.Element{}}
}

// cacheKey builds the key of an entry.
func cacheKey(method, target string, private bool, token string) cacheKeyT {
	k := cacheKeyT{method: method, target: target, private: private}
	if private {
		sum := sha256.Sum256([]byte(token))
		copy(k.token[:], sum[:16])
	}
	return k
}

// get returns a fresh result: the public entry, else the private one of
// token.
func (c *cache) get(method, target, token string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, private := range [2]bool{false, true} {
		if private && !c.hasPrivate {
			break
		}
		k := cacheKey(method, target, private, token)
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

// put stores a result by its ttlMs and cacheScope.
func (c *cache) put(method, target, token string, result json.RawMessage) {
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
	k := cacheKey(method, target, private, token)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &cacheEntry{key: k, method: method, target: target, private: private, expires: c.now().Add(ttl), result: result}
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
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*cacheEntry); f(e) {
			c.ll.Remove(el)
			delete(c.items, e.key)
		}
		el = next
	}
}

// dropMethod drops every page of method, or only target's entry when target
// is set (resources/updated names a URI; sub-resources go too).
func (c *cache) dropMethod(method, target string) {
	c.drop(func(e *cacheEntry) bool {
		return e.method == method && (target == "" || e.target == target || strings.HasPrefix(e.target, target))
	})
}

func (c *cache) dropPrivate() { c.drop(func(e *cacheEntry) bool { return e.private }) }

func (c *cache) clear() { c.drop(func(*cacheEntry) bool { return true }) }

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
