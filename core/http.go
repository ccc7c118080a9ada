package core

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpfn/mcpfn/core/internal/jsonwire"
)

// ServeHTTP serves the MCP endpoint over Streamable HTTP: POST carries
// requests of both eras; GET and DELETE belong to legacy sessions (405 on a
// modern-only server); OPTIONS answers CORS preflights. It validates Origin
// and Host before anything else. Every status code the transport needs is
// chosen here, so platform adapters only copy what it writes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	hostOK := s.hostAllowed(r)
	// Authorization metadata is public: served after the Host check, before
	// the Origin check (see Authenticator).
	if hostOK && s.opts.Authenticator != nil && s.serveMetadata(w, r) {
		return
	}
	if !hostOK || (origin != "" && !s.originAllowed(r, origin)) {
		s.log.WarnContext(r.Context(), "refused request from a foreign origin or host",
			"origin", origin, "host", r.Host)
		writeJSONError(w, http.StatusForbidden, nil, &wireError{Code: CodeInvalidRequest, Message: "Forbidden: origin or host not allowed"})
		return
	}
	if origin != "" {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate")
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

// writeJSONError writes a complete JSON-RPC error response.
func writeJSONError(w http.ResponseWriter, status int, id []byte, e *wireError) {
	b := appendErrorResponse(make([]byte, 0, 128), id, e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// acceptance records what the client's Accept header allows.
type acceptance struct {
	json, sse bool
}

func parseAccept(h string) acceptance {
	if strings.TrimSpace(h) == "" {
		return acceptance{json: true, sse: true}
	}
	var a acceptance
	for _, part := range strings.Split(h, ",") {
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
			&wireError{Code: CodeInvalidRequest, Message: "Invalid Request: body too large"})
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
			writeJSONError(w, http.StatusRequestTimeout, nil, &wireError{Code: CodeInvalidRequest,
				Message: "Request Timeout: the body was not received in time"})
			return nil, false
		}
		writeJSONError(w, http.StatusBadRequest, nil, &wireError{Code: CodeParseError, Message: "Parse error: could not read the body"})
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

// servePost handles every POST: one JSON-RPC message (or a legacy batch).
func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeJSONError(w, http.StatusUnsupportedMediaType, nil,
				&wireError{Code: CodeInvalidRequest, Message: "Invalid Request: Content-Type must be application/json"})
			return
		}
	}
	acc := parseAccept(r.Header.Get("Accept"))
	if !acc.json && !acc.sse {
		writeJSONError(w, http.StatusNotAcceptable, nil,
			&wireError{Code: CodeInvalidRequest, Message: "Not Acceptable: Accept must list application/json and text/event-stream"})
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if !json.Valid(body) {
		writeJSONError(w, http.StatusBadRequest, nil, &wireError{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"})
		return
	}
	if first := body[jsonwire.SkipSpace(body, 0)]; first == '[' {
		s.serveBatch(w, r, body, acc)
		return
	}
	m, id, perr := parseMessage(body)
	if perr != nil {
		writeJSONError(w, http.StatusBadRequest, id, toWireError(perr))
		return
	}
	if s.isModernRequest(r, m) {
		s.serveModern(w, r, m, acc)
		return
	}
	s.serveLegacyPost(w, r, m, acc)
}

// isModernRequest classifies a POSTed message (2026-07-28
// basic/versioning; docs/design.md, "Two eras, one endpoint"): modern _meta
// makes it modern whatever its method; a session
// id, initialize, a legacy MCP-Protocol-Version header or no version at all
// make it legacy; anything else is modern, whose validation then answers.
func (s *Server) isModernRequest(r *http.Request, m *rpcMessage) bool {
	m.indexParams()
	modernMeta := hasVersionKey(m.pMeta)
	switch s.opts.Mode {
	case ModeModern:
		// A legacy initialize still goes to the legacy path, which answers
		// with the versions this server speaks.
		return modernMeta || m.method != "initialize"
	case ModeLegacy:
		return false
	}
	if modernMeta {
		return true
	}
	v := r.Header.Get(HeaderProtocolVersion)
	if m.isResponse && isModernVersion(v) {
		return true // clients do not send responses in 2026-07-28: 400
	}
	if r.Header.Get(HeaderSessionID) != "" || m.method == "initialize" || m.isResponse {
		return false
	}
	return v != "" && !isLegacyVersion(v)
}

// hasVersionKey reports whether a _meta object carries the protocol version
// key.
func hasVersionKey(meta []byte) bool {
	found := false
	if jsonwire.IsObject(meta) {
		jsonwire.EachMember(meta, func(k, _ []byte) bool {
			found = jsonwire.KeyIs(k, MetaProtocolVersion)
			return !found
		})
	}
	return found
}

// exchange is the response side of one HTTP request: a single JSON response,
// or an SSE stream carrying notifications (and legacy server-to-client
// requests) before the response. Status codes other than 200 can only be
// chosen while nothing has been written.
type exchange struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	acc     acceptance
	wantSSE bool // the answer is an SSE stream even without notifications

	mu      sync.Mutex
	started bool // SSE headers written
	done    bool // final response written
	buf     []byte
	// header is applied to the response headers before they are written.
	header func(http.Header)
	// eventID, when set, numbers SSE events (legacy 2025-11-25 streams).
	eventID func() string
}

func newExchange(w http.ResponseWriter, acc acceptance) *exchange {
	return &exchange{w: w, acc: acc}
}

// flush pushes what was written to the client. Callers hold x.mu.
func (x *exchange) flush() error {
	if x.rc == nil {
		x.rc = http.NewResponseController(x.w)
	}
	return x.rc.Flush()
}

var errStreamClosed = errors.New("mcp: response stream closed")

// startSSE writes the SSE response headers. Callers hold x.mu.
func (x *exchange) startSSE() {
	if x.started {
		return
	}
	h := x.w.Header()
	if x.header != nil {
		x.header(h)
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
	x.started = true
}

// writeEvent writes one SSE event holding msg and flushes. Callers hold x.mu.
func (x *exchange) writeEvent(msg []byte) error {
	b := x.buf[:0]
	if x.eventID != nil {
		b = append(b, "id: "...)
		b = append(b, x.eventID()...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, msg...)
	b = append(b, '\n', '\n')
	x.buf = b
	if _, err := x.w.Write(b); err != nil {
		return err
	}
	return x.flush()
}

// canStream reports whether notifications can be sent on this response.
func (x *exchange) canStream() bool { return x.acc.sse }

// notify sends a notification on the SSE stream, starting it if needed. It is
// dropped when the client does not accept SSE.
func (x *exchange) notify(ctx context.Context, method string, params any) error {
	if !x.acc.sse {
		return nil
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return x.send(ctx, jsonwire.AppendNotification(nil, method, p))
}

// open starts the SSE stream and flushes its headers.
func (x *exchange) open() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.startSSE()
	x.flush()
}

// send writes one message on the SSE stream.
func (x *exchange) send(ctx context.Context, msg []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return errStreamClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	x.startSSE()
	return x.writeEvent(msg)
}

// comment writes an SSE comment line (keep-alive) if the stream is open.
func (x *exchange) comment() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done || !x.started {
		return nil
	}
	if _, err := io.WriteString(x.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return x.flush()
}

// finish writes the final response: as the last SSE event when a stream is
// open (or wanted and the status is 200), else as JSON with status.
func (x *exchange) finish(status int, msg []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	if x.started || (status == http.StatusOK && x.acc.sse && (x.wantSSE || !x.acc.json)) {
		x.startSSE()
		x.writeEvent(msg)
		return
	}
	h := x.w.Header()
	if x.header != nil {
		x.header(h)
	}
	h.Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	x.w.Write(msg)
}

// noResponse ends the exchange without a JSON-RPC response (a cancelled
// legacy request): an SSE stream that ends, or 204.
func (x *exchange) noResponse() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	x.done = true
	if x.started {
		return
	}
	if x.header != nil {
		x.header(x.w.Header())
	}
	x.w.WriteHeader(http.StatusNoContent)
}

// accepted answers a notification or response with 202 and no body.
func (x *exchange) accepted() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done = true
	if x.header != nil {
		x.header(x.w.Header())
	}
	x.w.WriteHeader(http.StatusAccepted)
}

// keepAlive writes comment lines every d until ctx ends. It returns when ctx
// is done, so it never outlives the request.
func keepAlive(ctx context.Context, x *exchange, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if x.comment() != nil {
				return
			}
		}
	}
}
