package auth

import "time"

// SetNow replaces the resource's clock (tests of expiry, skew and caches).
func SetNow(rs *Resource, now func() time.Time) { rs.now = now }

// IntrospectionCacheLen returns the number of cached introspection answers.
func IntrospectionCacheLen(rs *Resource) int {
	if rs.introspector == nil {
		return 0
	}
	in := rs.introspector.intro
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.cache)
}
