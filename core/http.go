package core

import (
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/internal/mcpheader"
)

// ServeHTTP serves the MCP endpoint over Streamable HTTP: POST carries
// requests of both eras; GET and DELETE belong to legacy sessions (405 on a
// modern-only server); OPTIONS answers CORS preflights. It validates Origin
// and Host before anything else. Every status code the transport needs is
// chosen here, so platform adapters only copy what it writes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.serving.Load() {
		s.serving.Store(true)
	}
	origin := headerGet(r.Header, "Origin")
	hostOK := s.hostAllowed(r)
	// Authorization metadata is public: served after the Host check, before
	// the Origin check (see Authenticator).
	if hostOK && s.opts.Authenticator != nil && s.serveMetadata(w, r) {
		return
	}
	if !hostOK || (origin != "" && !s.originAllowed(r, origin)) {
		s.log.WarnContext(r.Context(), "refused request from a foreign origin or host",
			"origin", Truncate(origin, LogNameBytes), "host", Truncate(r.Host, LogNameBytes))
		writeJSONError(w, http.StatusForbidden, nil, &Error{Code: CodeInvalidRequest, Message: "Forbidden: origin or host not allowed"})
		return
	}
	if origin != "" {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate")
		if s.opts.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
	}
	if s.opts.Authenticator != nil && r.Method != http.MethodOptions {
		var ok bool
		if r, ok = s.authenticate(w, r); !ok {
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r)
	case http.MethodGet:
		if !s.servesLegacy() {
			s.methodNotAllowed(w)
			return
		}
		s.serveLegacyGet(w, r)
	case http.MethodDelete:
		if !s.servesLegacy() {
			s.methodNotAllowed(w)
			return
		}
		s.serveLegacyDelete(w, r)
	case http.MethodOptions:
		s.servePreflight(w, r)
	default:
		s.methodNotAllowed(w)
	}
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

// originAllowed checks a present Origin header: against AllowedOrigins when
// it is set (an empty list allows none), else against the defaults.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" || o == origin {
			return true
		}
	}
	if s.opts.AllowedOrigins != nil {
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

// checkAllowedOrigin reports why an AllowedOrigins entry can never equal
// an Origin header, which originAllowed compares byte for byte: browsers
// serialize an origin as scheme://host[:port] (RFC 6454 §6.2, the URL
// Standard's origin serialization), with the scheme and host in lower
// case, a host name in its ASCII (punycode) form, an IPv6 address in
// brackets in its canonical form, no port when it is the scheme's default,
// and no path, query, user or trailing slash. "*" allows any origin.
// "null", the opaque origin of every sandboxed or file document, is
// refused: allowing it would allow them all. The error says what to write,
// when that can be told.
func checkAllowedOrigin(o string) error {
	if o == "*" {
		return nil
	}
	const form = "an origin is scheme://host[:port] exactly as browsers send it in the Origin header (lower case, no path, no trailing slash, no default port), or \"*\""
	if o == "null" {
		return errors.New(`"null" is the opaque origin every sandboxed or file:// document sends: allowing it would allow them all`)
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || !originSchemeOK(strings.ToLower(scheme)) || strings.ContainsAny(o, " \t\r\n,") {
		return errors.New(form)
	}
	// Whatever follows the authority (a path, even "/", a query, a
	// fragment) and a user are never part of an origin.
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return errors.New(form + ": the IPv6 address has no closing ']'")
		}
		host, port = rest[:end+1], rest[end+1:]
		if port != "" && port[0] != ':' {
			return errors.New(form)
		}
		port = strings.TrimPrefix(port, ":")
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return errors.New(form + ": the host is not an IPv6 address")
		}
		host = "[" + a.String() + "]"
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host, port = rest[:i], rest[i+1:]
	}
	if host == "" {
		return errors.New(form + ": the host is missing")
	}
	for _, c := range host {
		if c >= 0x80 {
			return errors.New(form + ": browsers send a host name in its ASCII form: write the punycode (xn--...) name")
		}
	}
	host = strings.ToLower(host)
	if !strings.HasPrefix(host, "[") && strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
		return errors.New(form + ": the host holds characters a host name does not")
	}
	scheme = strings.ToLower(scheme)
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return errors.New(form + ": port " + strconv.Quote(port) + " is not a port number (1-65535, no leading zero)")
		}
		if defaultPort[scheme] == port {
			port = "" // browsers leave out the default port
		}
	}
	want := scheme + "://" + host
	if port != "" {
		want += ":" + port
	}
	if want != o {
		return errors.New(form + ": did you mean " + strconv.Quote(want) + "?")
	}
	return nil
}

// defaultPort holds the ports browsers leave out of an origin.
var defaultPort = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}

// originSchemeOK reports whether s is a URL scheme (RFC 3986 §3.1), in
// lower case.
func originSchemeOK(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789+.-") == ""
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

// isLoopbackHost reports whether host (without port) names the loopback
// interface.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	// A loopback address is written 127.x.x.x, or in IPv6 (::1, also
	// IPv4-mapped) with leading zeros or colons: a name is none of these,
	// and needs no parse (whose error allocates).
	if host == "" || (host[0] != '1' && host[0] != '0' && host[0] != ':') {
		return false
	}
	// netip parses without allocating; net.ParseIP, whose answers these
	// are, takes no zone.
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// splitHost returns the host part of host[:port].
func splitHost(hostport string) string {
	if strings.IndexByte(hostport, ':') < 0 {
		return hostport // no port (net.SplitHostPort would fail)
	}
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// serveMetadata serves the authenticator's metadata document for r, if r
// asks for one. It reports whether it answered.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
		return false
	}
	doc, err := s.opts.Authenticator.Metadata(r)
	if err == nil && doc == nil {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if err != nil {
		s.writeHTTPError(r.Context(), w, err)
		return true
	}
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
			h.Set("Access-Control-Allow-Headers", rh)
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
	return true
}

// authenticate runs the authenticator on r. It returns the request to
// continue with, or false after answering with the authenticator's error.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	ctx, err := s.opts.Authenticator.Authenticate(r)
	if err != nil {
		s.writeHTTPError(r.Context(), w, err)
		return nil, false
	}
	if ctx == nil || ctx == r.Context() {
		return r, true
	}
	return r.WithContext(ctx), true
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

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool { return mcpheader.IsToken(s) }

func canonicalHeader(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

// headerGet is h.Get(key) for a key already in canonical form (as net/http
// stores received headers): a map access, without canonicalizing key again
// (which allocates for a name such as MCP-Protocol-Version).
func headerGet(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (s *Server) allowedMethods() string {
	if s.servesLegacy() {
		return "POST, GET, DELETE, OPTIONS"
	}
	return "POST, OPTIONS"
}

func (s *Server) methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", s.allowedMethods())
	http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
}

// servePost handles every POST: one JSON-RPC message (or a legacy batch).
func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	if ct := headerGet(r.Header, "Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeJSONError(w, http.StatusUnsupportedMediaType, nil,
				&Error{Code: CodeInvalidRequest, Message: "Invalid Request: Content-Type must be application/json"})
			return
		}
	}
	acc := parseAccept(headerGet(r.Header, "Accept"))
	if !acc.json && !acc.sse {
		writeJSONError(w, http.StatusNotAcceptable, nil,
			&Error{Code: CodeInvalidRequest, Message: "Not Acceptable: Accept must list application/json and text/event-stream"})
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if !jsonwire.Valid(body) { // exactly encoding/json.Valid (jsonwire's differential fuzz target)
		writeJSONError(w, http.StatusBadRequest, nil, &Error{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"})
		return
	}
	if first := body[jsonwire.SkipSpace(body, 0)]; first == '[' {
		s.serveBatch(w, r, body) // a batch is legacy (2025-03-26)
		return
	}
	m, _ := s.messages.Get().(*rpcMessage)
	if m == nil {
		m = new(rpcMessage)
	}
	defer s.recycle(m)
	if id, perr := m.parse(body); perr != nil {
		writeJSONError(w, http.StatusBadRequest, id, toWireError(perr))
		return
	}
	p := &post{}
	m.post = p
	x := &p.x
	x.w, x.acc, x.era = w, acc, s.eraOf(r.Header, m)
	s.serve(r.Context(), x, r, m)
}

// recycle clears a served message for the next POST: every reference it
// held (into the body, to its post) goes with it.
func (s *Server) recycle(m *rpcMessage) {
	*m = rpcMessage{}
	s.messages.Put(m)
}

// acceptance records what the client's Accept header allows.
type acceptance struct {
	json, sse bool
}

func parseAccept(h string) acceptance {
	if h == "application/json, text/event-stream" {
		return acceptance{json: true, sse: true} // what the spec tells clients to send
	}
	if strings.TrimSpace(h) == "" {
		return acceptance{json: true, sse: true}
	}
	var a acceptance
	for rest, more := h, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		mt := strings.TrimSpace(part)
		if i := strings.IndexByte(mt, ';'); i >= 0 {
			if q := strings.TrimSpace(mt[i+1:]); strings.HasPrefix(q, "q=0") && strings.Trim(q[2:], ".0") == "" {
				continue // q=0: not acceptable
			}
			mt = strings.TrimSpace(mt[:i])
		}
		switch strings.ToLower(mt) {
		case "*/*":
			a.json, a.sse = true, true
		case "application/*", "application/json":
			a.json = true
		case "text/*", "text/event-stream":
			a.sse = true
		}
	}
	return a
}

// readBody reads the request body up to the configured limit. The buffer
// grows as bytes arrive: a client that declares a large Content-Length and
// sends little costs what it sent, not what it declared. A read that fails
// on a deadline (see adapters/nethttp BodyReadTimeout) is answered 408.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := s.opts.MaxRequestBytes
	tooLarge := func() ([]byte, bool) {
		writeJSONError(w, http.StatusRequestEntityTooLarge, nil,
			&Error{Code: CodeInvalidRequest, Message: "Invalid Request: body too large"})
		return nil, false
	}
	if r.ContentLength > max {
		return tooLarge()
	}
	limit := max
	if r.ContentLength > 0 {
		limit = r.ContentLength
	}
	body, err := readGrowing(r.Body, limit)
	switch {
	case err == nil && int64(len(body)) > limit && r.ContentLength <= 0:
		return tooLarge()
	case err == nil && int64(len(body)) > limit:
		// A body longer than announced is a protocol error of the client.
		err = errors.New("body longer than Content-Length")
	case err == nil && int64(len(body)) < r.ContentLength:
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			writeJSONError(w, http.StatusRequestTimeout, nil, &Error{Code: CodeInvalidRequest,
				Message: "Request Timeout: the body was not received in time"})
			return nil, false
		}
		writeJSONError(w, http.StatusBadRequest, nil, &Error{Code: CodeParseError, Message: "Parse error: could not read the body"})
		return nil, false
	}
	return body, true
}

// readGrowing reads r to its end or to limit+1 bytes, whichever comes
// first, into a buffer that starts small (at most 16 KiB) and grows
// geometrically with what actually arrives.
func readGrowing(r io.Reader, limit int64) ([]byte, error) {
	b := make([]byte, 0, min(limit+1, 16<<10))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit || err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
