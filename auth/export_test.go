package auth

import "time"

// SetNow replaces the resource's clock (tests of expiry, skew and caches).
func SetNow(rs *Resource, now func() time.Time) { rs.now = now }
