package core

// SessionStoreOf returns the session store s uses: with
// ServerOptions.SessionStore nil, the default in-memory store.
func SessionStoreOf(s *Server) SessionStore { return s.store }

// TaskStoreOf returns the task store s uses: with ServerOptions.TaskStore
// nil, the default in-memory store.
func TaskStoreOf(s *Server) TaskStore { return s.tk.store }

// LocalTaskBytes returns the encoded bytes the default in-memory task
// store holds (0 when s has another store).
func LocalTaskBytes(s *Server) int64 {
	if l, ok := s.tk.store.(*MemoryTaskStore); ok {
		return l.Bytes()
	}
	return 0
}
