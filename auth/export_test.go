package auth

// IntrospectionCacheLen returns the number of cached introspection answers.
func IntrospectionCacheLen(rs *Resource) int {
	if rs.introspector == nil {
		return 0
	}
	return rs.introspector.intro.cache.len()
}

// JWTCacheLen returns the number of cached verified JWTs.
func JWTCacheLen(rs *Resource) int { return rs.jwtCache.len() }
