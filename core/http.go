package core

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
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
		writeJSONError(w, http.StatusForbidden, nil, &Error{Code: CodeInvalidRequest, Message: "Forbidden: origin or host not allowed"})
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

// writeJSONError writes a complete JSON-RPC error response.
func writeJSONError(w http.ResponseWriter, status int, id []byte, e *Error) {
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

// servePost handles every POST: one JSON-RPC message (or a legacy batch).
func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeJSONError(w, http.StatusUnsupportedMediaType, nil,
				&Error{Code: CodeInvalidRequest, Message: "Invalid Request: Content-Type must be application/json"})
			return
		}
	}
	acc := parseAccept(r.Header.Get("Accept"))
	if !acc.json && !acc.sse {
		writeJSONError(w, http.StatusNotAcceptable, nil,
			&Error{Code: CodeInvalidRequest, Message: "Not Acceptable: Accept must list application/json and text/event-stream"})
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if !json.Valid(body) {
		writeJSONError(w, http.StatusBadRequest, nil, &Error{Code: CodeParseError, Message: "Parse error: the body is not valid JSON"})
		return
	}
	if first := body[jsonwire.SkipSpace(body, 0)]; first == '[' {
		s.serveBatch(w, r, body) // a batch is legacy (2025-03-26)
		return
	}
	m, id, perr := parseMessage(body)
	if perr != nil {
		writeJSONError(w, http.StatusBadRequest, id, toWireError(perr))
		return
	}
	s.serve(r.Context(), newExchange(w, acc, s.eraOf(r.Header, m)), r, m)
}
