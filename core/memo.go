package core

import (
	"sync"
	"sync/atomic"
)

// memo is a per-server bounded cache of a pure function of short byte
// strings (client capabilities, form schemas): at most max entries, none
// evicted; once full, new results are computed and not kept. Cached values
// are never handed to handlers.
type memo[V any] struct {
	m sync.Map // string -> V
	n atomic.Int64
}

func (c *memo[V]) load(k []byte) (V, bool) {
	if v, ok := c.m.Load(string(k)); ok {
		return v.(V), true
	}
	var zero V
	return zero, false
}

func (c *memo[V]) store(k []byte, v V, max int64) {
	if c.n.Add(1) <= max {
		c.m.Store(string(k), v)
	}
}
