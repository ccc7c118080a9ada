package core

// SessionStoreOf returns the session store s uses: with
// ServerOptions.SessionStore nil, the default in-memory store.
func SessionStoreOf(s *Server) SessionStore { return s.store }
