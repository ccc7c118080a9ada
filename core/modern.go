package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpfn/mcpfn/core/internal/jsonwire"
	"github.com/mcpfn/mcpfn/core/internal/schema"
)

// methodHandler answers one request: it returns the encoded result object.
type methodHandler func(s *Server, ctx context.Context, r *Request, params []byte) ([]byte, error)

// methodSpec describes a method of the 2026-07-28 endpoint.
type methodSpec struct {
	handle methodHandler
	// available reports whether the capability behind the method is served;
	// if not, the method is answered -32601 / 404.
	available func(s *Server, reg *registry) bool
	// nameParam is the params member mirrored in Mcp-Name ("name" or "uri").
	nameParam string
}

func always(*Server, *registry) bool { return true }

var modernMethods = map[string]*methodSpec{
	"server/discover":          {handle: (*Server).discover, available: always},
	"tools/list":               {handle: (*Server).listTools, available: (*Server).hasTools},
	"tools/call":               {handle: (*Server).callTool, available: (*Server).hasTools, nameParam: "name"},
	"resources/list":           {handle: (*Server).listResources, available: (*Server).hasResources},
	"resources/templates/list": {handle: (*Server).listTemplates, available: (*Server).hasResources},
	"resources/read":           {handle: (*Server).readResource, available: (*Server).hasResources, nameParam: "uri"},
	"prompts/list":             {handle: (*Server).listPrompts, available: (*Server).hasPrompts},
	"prompts/get":              {handle: (*Server).getPrompt, available: (*Server).hasPrompts, nameParam: "name"},
	"completion/complete": {handle: (*Server).complete, available: func(s *Server, _ *registry) bool {
		return s.opts.CompletionHandler != nil
	}},
	"subscriptions/listen": {handle: (*Server).listen, available: always},
}

// requestMeta is the decoded params._meta of a request.
type requestMeta struct {
	raw           []byte
	version       string
	hasVersion    bool
	caps          []byte
	hasCaps       bool
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte
}

func parseRequestMeta(msg *rpcMessage) (requestMeta, *Error) {
	var m requestMeta
	msg.indexParams()
	m.raw = msg.pMeta
	if m.raw == nil {
		return m, metaError("params._meta is required")
	}
	if !jsonwire.IsObject(m.raw) {
		return m, metaError("params._meta must be an object")
	}
	var bad *Error
	jsonwire.EachMember(m.raw, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, MetaProtocolVersion):
			s, ok := jsonwire.RawString(v)
			if !ok {
				bad = metaError(MetaProtocolVersion + " must be a string")
				return false
			}
			m.version, m.hasVersion = s, true
		case jsonwire.KeyIs(k, MetaClientCapabilities):
			if !jsonwire.IsObject(v) {
				bad = metaError(MetaClientCapabilities + " must be an object")
				return false
			}
			m.caps, m.hasCaps = v, true
		case jsonwire.KeyIs(k, MetaClientInfo):
			m.clientInfo = v
		case jsonwire.KeyIs(k, MetaLogLevel):
			m.logLevel = v
		case jsonwire.KeyIs(k, "progressToken"):
			m.progressToken = v
		}
		return true
	})
	if bad != nil {
		return m, bad
	}
	if !m.hasVersion {
		return m, metaError("params._meta is missing " + MetaProtocolVersion)
	}
	if !m.hasCaps {
		return m, metaError("params._meta is missing " + MetaClientCapabilities)
	}
	return m, nil
}

// metaError is the -32602 / 400 answer to a malformed request _meta.
func metaError(msg string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid params: " + msg, status: http.StatusBadRequest}
}

// emptyCaps stands for "no capabilities declared". It is nil, not a shared
// value: a shared pointer would let one handler change what every server
// believes about every client. All ClientCapabilities methods accept nil.
var emptyCaps *ClientCapabilities

// memo is a per-server bounded cache of a pure function of short byte
// strings (client capabilities, form schemas): at most max entries, none
// evicted; once full, new results are computed and not kept. Cached values
// are never handed to handlers.
type memo[V any] struct {
	m sync.Map // string -> V
	n atomic.Int64
}

func (c *memo[V]) load(k []byte) (V, bool) {
	if v, ok := c.m.Load(string(k)); ok {
		return v.(V), true
	}
	var zero V
	return zero, false
}

func (c *memo[V]) store(k []byte, v V, max int64) {
	if c.n.Add(1) <= max {
		c.m.Store(string(k), v)
	}
}

// decodeCaps decodes a request's client capabilities through the server's
// cache: clients send the same object on every request. The result is
// shared and must not reach handlers (see Request.caps).
func (s *Server) decodeCaps(raw []byte) (*ClientCapabilities, error) {
	if raw == nil || jsonwire.IsEmptyObject(raw) {
		return emptyCaps, nil
	}
	if c, ok := s.capsMemo.load(raw); ok {
		return c, nil
	}
	c := &ClientCapabilities{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if len(raw) <= 1024 {
		s.capsMemo.store(raw, c, 1024)
	}
	return c, nil
}

// serveModern runs the 2026-07-28 pipeline in the validation order of
// 2026-07-28 basic/transports/streamable-http (see docs/design.md,
// "Two eras, one endpoint").
func (s *Server) serveModern(w http.ResponseWriter, hr *http.Request, m *rpcMessage, acc acceptance) {
	x := newExchange(w, acc)
	if m.isResponse {
		writeJSONError(w, http.StatusBadRequest, nil, &wireError{Code: CodeInvalidRequest,
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
		s.replyError(ctx, x, m.id, err, true)
		return
	}
	r.x = x
	if m.method == "subscriptions/listen" {
		x.wantSSE = true
	} else if r.progressToken != nil || r.logLevel >= 0 {
		x.wantSSE = true
	}
	if err := s.authorizeMethod(ctx, r); err != nil {
		s.replyError(ctx, x, m.id, err, true)
		return
	}
	spec := modernMethods[m.method]
	result, err := s.invoke(ctx, spec.handle, r, m.params)
	if err != nil {
		s.replyError(ctx, x, m.id, err, true)
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
		return nil, &Error{
			Code:    CodeUnsupportedProtocolVersion,
			Message: fmt.Sprintf("Unsupported protocol version %q", meta.version),
			Data:    map[string]any{"supported": s.supportedVersions(), "requested": meta.version},
			status:  http.StatusBadRequest,
		}
	}
	spec := modernMethods[m.method]
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
		dec, ok := decodeHeaderValue(hn)
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
		modern:             true,
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
		rank := LoggingLevel(lv).rank()
		if !ok || rank < 0 {
			return nil, InvalidParamsError("Invalid params: unknown log level %s", string(meta.logLevel))
		}
		r.logLevel = rank
	}
	return r, nil
}

// invoke runs a method handler, turning a panic into a logged -32603.
func (s *Server) invoke(ctx context.Context, h methodHandler, r *Request, params []byte) (result []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "handler panicked", "method", r.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, errors.New("panic")
		}
	}()
	if !r.ownCaps {
		// The handler gets its own copy; the server decides on r.caps.
		if r.caps == nil {
			r.caps = r.ClientCapabilities
		}
		r.ClientCapabilities = r.caps.clone()
		r.ownCaps = true
	}
	return h(s, ctx, r, params)
}

// replyError answers with a JSON-RPC error. Errors that are not *Error are
// logged and sent as a generic -32603.
func (s *Server) replyError(ctx context.Context, x *exchange, id []byte, err error, modern bool) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.ErrorContext(ctx, "request failed", "error", err.Error())
	} else if e.Cause != nil && e.status >= 500 {
		// A server fault (the session store failed): say what happened.
		s.log.ErrorContext(ctx, "request failed", "code", e.Code, "status", e.status, "error", e.Cause.Error())
	} else if e.Cause != nil {
		s.log.DebugContext(ctx, "request refused", "code", e.Code, "error", e.Cause.Error())
	}
	s.errorHeaders(ctx, x, e)
	we := toWireError(err)
	status := http.StatusOK
	if e != nil && e.status != 0 {
		status = e.status
	} else if modern {
		status = httpStatusModern(we.Code)
	} else {
		status = httpStatusLegacy(we.Code)
	}
	x.finish(status, appendErrorResponse(make([]byte, 0, 128), id, we))
}

// resultTail appends the members every result shares: resultType (modern),
// the cache hint of method (modern; "" for none) and _meta (serverInfo on
// modern results, merged with the handler's meta).
func (r *Request) resultTail(b []byte, cacheMethod string, userMeta Meta, hint *CacheHint) []byte {
	if r.modern {
		b = append(b, `"resultType":"complete"`...)
		if cacheMethod != "" {
			h := r.srv.hints[cacheMethod]
			if hint != nil {
				h = cacheWire{ttlMs: hint.TTL.Milliseconds(), scope: hint.Scope}
				if h.scope == "" {
					h.scope = CacheScopePrivate
				}
				if h.ttlMs < 0 {
					h.ttlMs = 0
				}
			}
			b = append(b, `,"ttlMs":`...)
			b = strconv.AppendInt(b, h.ttlMs, 10)
			b = append(b, `,"cacheScope":"`...)
			b = append(b, h.scope...)
			b = append(b, '"')
		}
		b = append(b, ',')
	}
	b = r.appendMeta(b, userMeta)
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return b
}

// appendMeta appends `"_meta":{...},` when there is anything to send.
func (r *Request) appendMeta(b []byte, user Meta) []byte {
	if !r.modern {
		if len(user) == 0 {
			return b
		}
		m, err := json.Marshal(user)
		if err != nil {
			return b
		}
		b = append(b, `"_meta":`...)
		b = append(b, m...)
		return append(b, ',')
	}
	b = append(b, `"_meta":`...)
	if len(user) == 0 {
		b = append(b, r.srv.infoRaw...)
		return append(b, ',')
	}
	merged := make(map[string]any, len(user)+1)
	for k, v := range user {
		merged[k] = v
	}
	merged[MetaServerInfo] = r.srv.implRaw
	m, err := json.Marshal(merged)
	if err != nil {
		b = append(b, r.srv.infoRaw...)
	} else {
		b = append(b, m...)
	}
	return append(b, ',')
}

// encodeResult marshals v (a struct of method-specific members) and appends
// the common tail.
func (r *Request) encodeResult(v any, cacheMethod string, userMeta Meta, hint *CacheHint) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // drop '}'
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = r.resultTail(b, cacheMethod, userMeta, hint)
	return append(b, '}'), nil
}

// discover answers server/discover.
func (s *Server) discover(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	v := struct {
		SupportedVersions []string            `json:"supportedVersions"`
		Capabilities      *ServerCapabilities `json:"capabilities"`
		Instructions      string              `json:"instructions,omitempty"`
	}{s.supportedVersions(), s.capabilities(true, !isBuffered(ctx)), s.opts.Instructions}
	return r.encodeResult(v, "server/discover", nil, nil)
}

// paramsCursor reads params.cursor.
func paramsCursor(params []byte) (cursor string, has bool, err error) {
	var bad bool
	jsonwire.EachMember(params, func(k, v []byte) bool {
		if jsonwire.KeyIs(k, "cursor") {
			cursor, has = jsonwire.RawString(v)
			bad = !has && !jsonwire.IsNull(v)
			return false
		}
		return true
	})
	if bad {
		return "", false, InvalidParamsError("Invalid params: cursor must be a string")
	}
	return cursor, has, nil
}

const cursorPrefix = "c1:"

func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// paginate returns the page of items (sorted by key) after cursor.
func paginate[T any](items []T, key func(T) string, cursor string, hasCursor bool, size int) ([]T, string, error) {
	start := 0
	if hasCursor {
		after, ok := decodeCursor(cursor)
		if !ok {
			return nil, "", InvalidParamsError("Invalid params: invalid cursor")
		}
		for start < len(items) && key(items[start]) <= after {
			start++
		}
	}
	end := start + size
	if end >= len(items) {
		return items[start:], "", nil
	}
	return items[start:end], encodeCursor(key(items[end-1])), nil
}

// listPage answers a paginated list method (prompts, resources, resource
// templates): the page of items after the request's cursor, encoded by
// wire, as the result member, with the method's cache hint.
func listPage[T, W any](r *Request, params []byte, items []T, key func(T) string, wire func(T) W, member, method string) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	page, next, err := paginate(items, key, cursor, has, r.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	list := make([]W, len(page))
	for i, x := range page {
		list[i] = wire(x)
	}
	lj, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	b := append(append(append([]byte(`{"`), member...), `":`...), lj...)
	b = append(b, ',')
	if next != "" {
		b = append(jsonwire.AppendString(append(b, `"nextCursor":`...), next), ',')
	}
	b = r.resultTail(b, method, nil, nil)
	return append(b, '}'), nil
}

// listTools answers tools/list.
func (s *Server) listTools(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	cursor, has, err := paramsCursor(params)
	if err != nil {
		return nil, err
	}
	if s.opts.ListToolsHandler != nil {
		res, err := s.opts.ListToolsHandler(ctx, &ListToolsRequest{Request: r, Cursor: cursor, HasCursor: has})
		if err != nil {
			return nil, err
		}
		b := []byte(`{"tools":[`)
		n := 0
		for _, t := range res.Tools {
			if _, err := s.advancedTool(t); err != nil {
				// Clients drop invalid tools; do not list them at all.
				s.log.WarnContext(ctx, "tools/list: skipping an invalid tool", "tool", t.Name, "error", err.Error())
				continue
			}
			tj, err := advancedToolJSON(t, r.modern)
			if err != nil {
				return nil, fmt.Errorf("tools/list: tool %q: %w", t.Name, err)
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, tj...)
		}
		b = append(b, "],"...)
		if res.NextCursor != "" {
			b = append(b, `"nextCursor":`...)
			b = jsonwire.AppendString(b, res.NextCursor)
			b = append(b, ',')
		}
		b = r.resultTail(b, "tools/list", nil, res.Cache)
		return append(b, '}'), nil
	}
	list := s.reg.Load().toolList
	if r.modern {
		list = s.reg.Load().modernTools
	}
	page, next, err := paginate(list, func(t *serverTool) string { return t.tool.Name }, cursor, has, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 256*len(page)+128)
	b = append(b, `{"tools":[`...)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.listJSON(r)...)
	}
	b = append(b, "],"...)
	if next != "" {
		b = append(b, `"nextCursor":`...)
		b = jsonwire.AppendString(b, next)
		b = append(b, ',')
	}
	b = r.resultTail(b, "tools/list", nil, nil)
	return append(b, '}'), nil
}

// advancedToolJSON encodes a tool returned by an advanced list handler.
func advancedToolJSON(t *Tool, modern bool) ([]byte, error) {
	tc := *t
	if tc.InputSchema == nil {
		tc.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if !modern && tc.OutputSchema != nil {
		out, err := schema.Normalize(tc.OutputSchema)
		if err != nil || schema.RootType(out) != "object" {
			tc.OutputSchema = nil
		}
	}
	return json.Marshal(&tc)
}
