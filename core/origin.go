package core

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// isLoopbackHost reports whether host (without port) names the loopback
// interface.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitHost returns the host part of host[:port].
func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// servedOnLoopback reports whether the request arrived on a loopback address.
func servedOnLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return isLoopbackHost(splitHost(a.String()))
}

// hostAllowed implements DNS rebinding protection: a server reached on
// loopback answers only loopback host names (or AllowedHosts).
func (s *Server) hostAllowed(r *http.Request) bool {
	loop := servedOnLoopback(r)
	if !loop && len(s.opts.AllowedHosts) == 0 {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, r.Host) || strings.EqualFold(h, splitHost(r.Host)) {
			return true
		}
	}
	return loop && isLoopbackHost(splitHost(r.Host))
}

// originAllowed checks a present Origin header.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" || o == origin {
			return true
		}
	}
	if s.opts.AllowedOrigins != nil && len(s.opts.AllowedOrigins) > 0 {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if servedOnLoopback(r) && isLoopbackHost(u.Hostname()) {
		return true
	}
	return strings.EqualFold(u.Host, r.Host) // same origin
}

// servePreflight answers a CORS preflight for an allowed origin.
func (s *Server) servePreflight(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" || r.Header.Get("Access-Control-Request-Method") == "" {
		w.Header().Set("Allow", s.allowedMethods())
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", s.allowedMethods())
	var allowed []string
	for _, f := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		switch strings.ToLower(f) {
		case "content-type", "accept", "authorization", "mcp-protocol-version", "mcp-method",
			"mcp-name", "mcp-session-id", "last-event-id":
			allowed = append(allowed, f)
		default:
			if strings.HasPrefix(strings.ToLower(f), "mcp-param-") && isToken(f) {
				allowed = append(allowed, f)
			}
		}
	}
	if len(allowed) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(allowed, ", "))
	}
	h.Set("Access-Control-Max-Age", "600")
	h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	w.WriteHeader(http.StatusNoContent)
}
