package authtest

import (
	"net/http"
	"sync"
	"sync/atomic"
)

// SetRedirect makes e answer 307 Temporary Redirect to URL + MovedPrefix +
// the request's path, where the real endpoint answers, or stops doing so.
func (s *Server) SetRedirect(e Endpoint, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect[e] = on
}

// Hold holds the requests to one endpoint until Release: each waits, and
// is served once released, or gives up when its client goes away.
type Hold struct {
	s       *Server
	e       Endpoint
	arrived chan struct{}
	left    chan struct{}
	release chan struct{}
	once    sync.Once

	served, abandoned atomic.Int64
}

// Hold makes requests to e wait until the returned Hold is released (tests
// of a request in flight). Holding an endpoint again replaces the previous
// Hold, which keeps its waiting requests.
func (s *Server) Hold(e Endpoint) *Hold {
	h := &Hold{s: s, e: e, arrived: make(chan struct{}, 1024), left: make(chan struct{}, 1024), release: make(chan struct{})}
	s.mu.Lock()
	s.holds[e] = h
	s.mu.Unlock()
	return h
}

// Arrived receives once for each request that starts waiting (up to 1024
// unread).
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Left receives once for each held request that stops waiting, released
// or abandoned (up to 1024 unread), after Served or Abandoned counts it.
func (h *Hold) Left() <-chan struct{} { return h.left }

// Release lets the waiting requests proceed and stops holding the
// endpoint. It may be called more than once.
func (h *Hold) Release() {
	h.once.Do(func() {
		h.s.mu.Lock()
		if h.s.holds[h.e] == h {
			delete(h.s.holds, h.e)
		}
		h.s.mu.Unlock()
		close(h.release)
	})
}

// Served counts the held requests that were released and served.
func (h *Hold) Served() int64 { return h.served.Load() }

// Abandoned counts the held requests whose client went away first.
func (h *Hold) Abandoned() int64 { return h.abandoned.Load() }

// wait holds r while h is held; it reports whether r is to be served.
func (h *Hold) wait(r *http.Request) bool {
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	served := false
	select {
	case <-h.release:
		h.served.Add(1)
		served = true
	case <-r.Context().Done():
		h.abandoned.Add(1)
	}
	select {
	case h.left <- struct{}{}:
	default:
	}
	return served
}

// gate applies SetRedirect and Hold to the requests of endpoint e.
func (s *Server) gate(e Endpoint, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		redirect, h := s.redirect[e], s.holds[e]
		s.mu.Unlock()
		if redirect {
			http.Redirect(w, r, s.URL+MovedPrefix+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		if h != nil && !h.wait(r) {
			return
		}
		next(w, r)
	}
}
