package authtest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
)

// Requests returns the requests endpoint e received, oldest first (the
// last few thousand), including those answered with an error; a request a
// Hold holds is listed once released, one a redirect answers is listed
// under its target. Their maps are shared: do not modify them.
func (s *Server) Requests(e Endpoint) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log[e])
}

// record adds r to the requests of e. A POST form is parsed here.
func (s *Server) record(e Endpoint, r *http.Request, body map[string]any) {
	req := Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), DPoP: r.Header.Get("DPoP"), JSON: maps.Clone(body)}
	if r.Method == http.MethodGet {
		req.Form = r.URL.Query()
	} else if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if r.ParseForm() == nil {
			req.Form = maps.Clone(r.PostForm)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := append(s.log[e], req)
	if len(l) > maxLogged {
		l = slices.Delete(l, 0, len(l)-maxLogged)
	}
	s.log[e] = l
}

// arrive counts a request to e in n and records it, and answers it 503
// with msg while down is set; it reports whether the handler goes on to
// serve it.
func (s *Server) arrive(w http.ResponseWriter, r *http.Request, e Endpoint, n *atomic.Int64, down *atomic.Bool, msg string) bool {
	n.Add(1)
	s.record(e, r, nil)
	if down.Load() {
		http.Error(w, msg, http.StatusServiceUnavailable)
		return false
	}
	return true
}
