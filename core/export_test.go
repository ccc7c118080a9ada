package core

// SessionStoreOf returns the session store s uses: with
// ServerOptions.SessionStore nil, the default in-memory store.
func SessionStoreOf(s *Server) SessionStore { return s.store }

// TaskStoreOf returns the task store s uses: with ServerOptions.TaskStore
// nil, the default in-memory store.
func TaskStoreOf(s *Server) TaskStore { return s.tk.store }
