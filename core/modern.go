package core

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// serveModern runs the 2026-07-28 pipeline in the validation order of
// 2026-07-28 basic/transports/streamable-http (see docs/design.md,
// "Two eras, one endpoint").
func (s *Server) serveModern(w http.ResponseWriter, hr *http.Request, m *rpcMessage, acc acceptance) {
	x := newExchange(w, acc)
	if m.isResponse {
		writeJSONError(w, http.StatusBadRequest, nil, &Error{Code: CodeInvalidRequest,
			Message: "Invalid Request: clients do not send responses in protocol version " + ProtocolVersion20260728})
		return
	}
	if m.isNotification() {
		x.accepted()
		return
	}
	ctx := hr.Context()
	r, err := s.newModernRequest(hr, m)
	if err != nil {
		s.replyError(ctx, x, m.id, err, eraModern)
		return
	}
	r.x = x
	if m.method == "subscriptions/listen" {
		x.wantSSE = true
	} else if r.progressToken != nil || r.logLevel >= 0 {
		x.wantSSE = true
	}
	if err := s.authorizeMethod(ctx, r); err != nil {
		s.replyError(ctx, x, m.id, err, eraModern)
		return
	}
	spec := methodTable[m.method]
	result, err := s.invoke(ctx, spec.handle, r, m.params)
	if err != nil {
		s.replyError(ctx, x, m.id, err, eraModern)
		return
	}
	if result == nil { // the handler wrote its own answer (listen)
		return
	}
	x.finish(http.StatusOK, jsonwire.AppendResult(make([]byte, 0, len(result)+len(m.id)+32), m.id, result))
}

// newModernRequest validates the envelope-level parts of a modern request
// (_meta, headers, version, method, Mcp-Name, logLevel) and builds its Request.
func (s *Server) newModernRequest(hr *http.Request, m *rpcMessage) (*Request, error) {
	meta, merr := parseRequestMeta(m)
	if merr != nil {
		return nil, merr
	}
	h := hr.Header
	hv, present, repeated := headerValue(h, canonProtocolVersion)
	if !present || repeated {
		return nil, headerMismatch("the " + HeaderProtocolVersion + " header is required")
	}
	if hv != meta.version {
		return nil, headerMismatch(fmt.Sprintf("%s header %q does not match params._meta %q", HeaderProtocolVersion, hv, meta.version))
	}
	hm, present, repeated := headerValue(h, canonMethod)
	if !present || repeated {
		return nil, headerMismatch("the " + HeaderMethod + " header is required")
	}
	if hm != m.method {
		return nil, headerMismatch(fmt.Sprintf("%s header %q does not match method %q", HeaderMethod, hm, m.method))
	}
	if !isModernVersion(meta.version) || !s.servesModern() {
		return nil, NewError(CodeUnsupportedProtocolVersion, fmt.Sprintf("Unsupported protocol version %q", meta.version)).
			WithData(map[string]any{"supported": s.supportedVersions(), "requested": meta.version}).
			WithHTTP(http.StatusBadRequest, nil)
	}
	spec := methodTable[m.method]
	if spec == nil || !spec.available(s, s.reg.Load()) {
		return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + m.method}
	}
	if spec.nameParam != "" {
		nv := m.pName
		if spec.nameParam == "uri" {
			nv = m.pURI
		}
		body, has := jsonwire.RawString(nv)
		hn, present, repeated := headerValue(h, canonName)
		if !present || repeated {
			return nil, headerMismatch("the " + HeaderName + " header is required for " + m.method)
		}
		dec, ok := mcp.DecodeHeaderValue(hn)
		if !ok {
			return nil, headerMismatch("the " + HeaderName + " header holds invalid characters")
		}
		if has && dec != body {
			return nil, headerMismatch(fmt.Sprintf("%s header %q does not match params.%s", HeaderName, dec, spec.nameParam))
		}
	}
	caps, err := s.decodeCaps(meta.caps)
	if err != nil {
		return nil, metaError(MetaClientCapabilities + " is malformed: " + err.Error())
	}
	r := &Request{
		Method:             m.method,
		ID:                 m.id,
		ProtocolVersion:    meta.version,
		ClientCapabilities: caps,
		caps:               caps,
		Meta:               meta.raw,
		Header:             h,
		Principal:          PrincipalFromContext(hr.Context()),
		srv:                s,
		era:                eraModern,
		logLevel:           -1,
	}
	if meta.clientInfo != nil && jsonwire.IsObject(meta.clientInfo) {
		var ci Implementation
		if json.Unmarshal(meta.clientInfo, &ci) == nil {
			r.ClientInfo = &ci
		}
	}
	if meta.progressToken != nil && !jsonwire.IsNull(meta.progressToken) {
		if meta.progressToken[0] != '"' && !validID(meta.progressToken) {
			return nil, InvalidParamsError("Invalid params: progressToken must be a string or an integer")
		}
		r.progressToken = meta.progressToken
	}
	if meta.logLevel != nil {
		lv, ok := jsonwire.RawString(meta.logLevel)
		rank := levelRank(LoggingLevel(lv))
		if !ok || rank < 0 {
			return nil, InvalidParamsError("Invalid params: unknown log level %s", string(meta.logLevel))
		}
		r.logLevel = int32(rank)
	}
	return r, nil
}

// discover answers server/discover.
func (s *Server) discover(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	v := struct {
		SupportedVersions []string            `json:"supportedVersions"`
		Capabilities      *ServerCapabilities `json:"capabilities"`
		Instructions      string              `json:"instructions,omitempty"`
	}{s.supportedVersions(), s.capabilities(eraModern, !isBuffered(ctx)), s.opts.Instructions}
	return r.encodeResult(v, "server/discover", nil, nil)
}
