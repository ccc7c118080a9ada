package core

// TaskPollerRunning reports whether s runs its loop that reads the tasks
// listen streams watch.
func TaskPollerRunning(s *Server) bool {
	p := &s.hub.tasks
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run != nil
}
