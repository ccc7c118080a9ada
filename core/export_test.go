package core

import "time"

// SetClock sets the clock of a server built from o (the unexported
// ServerOptions.now), for the black-box tests of expiry.
func SetClock(o *ServerOptions, now func() time.Time) { o.now = now }
