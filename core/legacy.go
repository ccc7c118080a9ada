package core

import (
	"net/http"
)

// Session is a legacy (2025-*) session established by initialize.
type Session struct {
	id string
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

func (s *Server) serveLegacyPost(w http.ResponseWriter, r *http.Request, m *rpcMessage, acc acceptance) {
	writeJSONError(w, http.StatusBadRequest, m.id, &wireError{Code: CodeInvalidRequest, Message: "legacy protocol not implemented yet"})
}

func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, body []byte, acc acceptance) {
	writeJSONError(w, http.StatusBadRequest, nil, &wireError{Code: CodeInvalidRequest, Message: "Invalid Request: batches are not supported"})
}

func (s *Server) serveLegacyGet(w http.ResponseWriter, r *http.Request) { methodNotAllowed(w) }

func (s *Server) serveLegacyDelete(w http.ResponseWriter, r *http.Request) { methodNotAllowed(w) }
