package core

import "time"

// SetClock sets the clock of a server built from o (the unexported
// ServerOptions.now), for the black-box tests of expiry.
func SetClock(o *ServerOptions, now func() time.Time) { o.now = now }

// SessionStoreOf returns the session store s uses: with
// ServerOptions.SessionStore nil, the default in-memory store.
func SessionStoreOf(s *Server) SessionStore { return s.store }
