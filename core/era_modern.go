package core

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
	"github.com/mcpfn/mcpfn/mcp"
)

// modernEra is the 2026-07-28 revision: no session, per-request _meta,
// resultType and cache hints on every result, serverInfo in every result's
// _meta, input_required results with a sealed requestState (2026-07-28
// basic/index, basic/patterns/mrtr, server/utilities/caching).
type modernEra struct{}

// taskEra is the era a task runs in: the Tasks extension
// (io.modelcontextprotocol/tasks) is of 2026-07-28.
var taskEra era = modernEra{}

// modernMethods is the 2026-07-28 method table.
var modernMethods = methodTable(map[string]*methodSpec{
	"server/discover":      {handle: (*Server).discover, available: always},
	"subscriptions/listen": {handle: (*Server).listen, available: always},
	// The extensions' methods, the Tasks extension's among them, are the
	// server's own (extension.go, extTable.methods).
})

// open checks a 2026-07-28 message in the validation order of 2026-07-28
// basic/transports/streamable-http (see docs/design.md, "Two eras, one
// endpoint"): the envelope, params._meta, the mirrored headers, the version,
// the method and Mcp-Name, then the values of _meta, and builds its
// Request.
func (modernEra) open(ctx context.Context, s *Server, hr *http.Request, x *exchange, m *rpcMessage) (context.Context, *Request, error) {
	r, err := openModern(ctx, s, hr, x, m)
	return ctx, r, err
}

func openModern(ctx context.Context, s *Server, hr *http.Request, x *exchange, m *rpcMessage) (*Request, error) {
	if m.isResponse {
		s.replyError(ctx, x, nil, invalidRequest("clients do not send responses in protocol version "+ProtocolVersion20260728))
		return nil, nil
	}
	if m.id == nil {
		x.accepted() // a notification
		return nil, nil
	}
	meta := &m.meta
	switch {
	case !meta.present:
		return nil, metaError("params._meta is required")
	case meta.raw == nil:
		return nil, metaError("params._meta must be an object")
	case meta.fault != faultNone:
		return nil, metaError(meta.fault.String())
	case !meta.hasVersion:
		return nil, metaError("params._meta is missing " + MetaProtocolVersion)
	case meta.caps == nil:
		return nil, metaError("params._meta is missing " + MetaClientCapabilities)
	}
	version := meta.version
	h := hr.Header
	hv, present, repeated := headerValue(h, canonProtocolVersion)
	if !present || repeated {
		return nil, headerMismatch("the " + HeaderProtocolVersion + " header is required")
	}
	if hv != version {
		return nil, headerMismatch(fmt.Sprintf("%s header %q does not match params._meta %q", HeaderProtocolVersion, Truncate(hv, LogNameBytes), Truncate(version, LogNameBytes)))
	}
	hm, present, repeated := headerValue(h, canonMethod)
	if !present || repeated {
		return nil, headerMismatch("the " + HeaderMethod + " header is required")
	}
	if hm != m.method {
		return nil, headerMismatch(fmt.Sprintf("%s header %q does not match method %q", HeaderMethod, Truncate(hm, LogNameBytes), Truncate(m.method, LogNameBytes)))
	}
	if !isModernVersion(version) || !s.servesModern() {
		return nil, NewError(CodeUnsupportedProtocolVersion, fmt.Sprintf("Unsupported protocol version %q", version)).
			WithData(map[string]any{"supported": s.supportedVersions(), "requested": version}).
			WithHTTP(http.StatusBadRequest, nil)
	}
	spec := modernMethods[m.method]
	if spec == nil {
		if x := s.ext.load().methods[m.method]; x != nil {
			spec = x.spec // an extension's method
		}
	}
	if spec == nil || !spec.available(s, s.reg.Load()) {
		return nil, methodNotFound(m.method)
	}
	if spec.nameParam != "" {
		nv := m.pName
		switch spec.nameParam {
		case "uri":
			nv = m.pURI
		case "taskId":
			nv = m.pTaskID
		case "name":
		default: // an extension method's (MethodOptions.NameParam)
			nv = paramMember(m.params, spec.nameParam)
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
			return nil, headerMismatch(fmt.Sprintf("%s header %q does not match params.%s", HeaderName, Truncate(dec, LogURIBytes), spec.nameParam))
		}
	}
	caps, err := s.decodeCaps(meta.caps)
	if err != nil {
		return nil, metaError(MetaClientCapabilities + " is malformed: " + err.Error())
	}
	r := m.newRequest()
	*r = Request{
		Method:             m.method,
		ID:                 m.id,
		ProtocolVersion:    version,
		ClientCapabilities: caps,
		caps:               caps,
		Meta:               meta.raw,
		Header:             h,
		hr:                 hr,
		Principal:          PrincipalFromContext(ctx),
		srv:                s,
		era:                eraModern,
		spec:               spec,
		x:                  x,
		logLevel:           -1,
	}
	if meta.clientInfo != nil && jsonwire.IsObject(meta.clientInfo) {
		r.ClientInfo = s.decodeClientInfo(meta.clientInfo)
	}
	if r.progressToken, err = meta.progress(); err != nil {
		return nil, err
	}
	if meta.logLevel != nil {
		lv, ok := jsonwire.RawString(meta.logLevel)
		rank := levelRank(LoggingLevel(lv))
		if !ok || rank < 0 {
			return nil, InvalidParamsError("Invalid params: unknown log level %s", string(meta.logLevel))
		}
		r.logLevel = int32(rank)
	}
	// Notifications travel on an SSE response: listen's always, a call's
	// when it asked for progress or log messages.
	x.wantSSE = m.method == "subscriptions/listen" || r.progressToken != nil || r.logLevel >= 0
	return r, nil
}

// decodeClientInfo decodes the clientInfo object of a request's _meta as
// encoding/json would (nil when it does not decode). Clients send it on
// every 2026-07-28 request, most often as a few plain strings: that shape
// is read by the scanner; any other (icons, escapes, null, a key that is
// not a field's exact name, which encoding/json would match
// case-insensitively) goes to encoding/json.
func decodeClientInfo(raw []byte) *Implementation {
	ci, _ := decodePlainClientInfo(raw)
	return ci
}

// decodeClientInfo is decodeClientInfo through the server's cache of the
// plain shape, which clients send on every request: each request gets its
// own Implementation, whose strings (immutable) it shares with the cache.
func (s *Server) decodeClientInfo(raw []byte) *Implementation {
	if c, ok := s.infoMemo.load(raw); ok {
		ci := *c
		return &ci
	}
	ci, plain := decodePlainClientInfo(raw)
	if plain && len(raw) <= 1024 {
		c := *ci
		s.infoMemo.store(raw, &c, 1024)
	}
	return ci
}

// decodePlainClientInfo is decodeClientInfo, and reports whether raw had
// the plain shape: members of plain strings only, none of them icons.
func decodePlainClientInfo(raw []byte) (*Implementation, bool) {
	ci := &Implementation{}
	fast := true
	jsonwire.EachMember(raw, func(k, v []byte) bool {
		var dst *string
		switch string(k) {
		case "name":
			dst = &ci.Name
		case "version":
			dst = &ci.Version
		case "title":
			dst = &ci.Title
		case "description":
			dst = &ci.Description
		case "websiteUrl":
			dst = &ci.WebsiteURL
		}
		if dst == nil || !plainString(v) {
			fast = false
			return false
		}
		*dst = string(v[1 : len(v)-1])
		return true
	})
	if fast {
		return ci, true
	}
	*ci = Implementation{}
	if json.Unmarshal(raw, ci) != nil {
		return nil, false
	}
	return ci, false
}

// plainString reports whether v is a JSON string whose bytes are its value:
// no escapes, and valid UTF-8 (encoding/json replaces invalid bytes).
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	ascii := true
	for _, c := range inner {
		switch {
		case c == '\\' || c < 0x20:
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.Valid(inner)
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

// Canonical forms of the mirrored header names, as net/http stores them.
var (
	canonProtocolVersion = canonicalHeader(HeaderProtocolVersion)
	canonMethod          = canonicalHeader(HeaderMethod)
	canonName            = canonicalHeader(HeaderName)
	canonSessionID       = canonicalHeader(HeaderSessionID)
)

// headerValue returns the single value of a header, whether it was present, and
// whether it was sent more than once (which makes it invalid for MCP's
// mirrored headers).
func headerValue(h http.Header, canonicalName string) (v string, present, repeated bool) {
	vs := h[canonicalName]
	switch len(vs) {
	case 0:
		return "", false, false
	case 1:
		return vs[0], true, false
	}
	return vs[0], true, true
}

func (modernEra) errorStatus(code int) int { return httpStatusModern(code) }

func (modernEra) appendResultHead(b []byte, s *Server, cacheMethod string, hint *cacheWire) []byte {
	b = append(b, `"resultType":"complete"`...)
	if cacheMethod != "" {
		h := s.hints[cacheMethod]
		if hint != nil {
			h = *hint
		}
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, h.ttlMs, 10)
		b = append(b, `,"cacheScope":"`...)
		b = append(b, h.scope...)
		b = append(b, '"')
	}
	return append(b, ',')
}

func (modernEra) appendMeta(b []byte, s *Server, user Meta) []byte {
	b = append(b, `"_meta":`...)
	if len(user) == 0 {
		b = append(b, s.infoRaw...)
		return append(b, ',')
	}
	merged := make(map[string]any, len(user)+1)
	for k, v := range user {
		merged[k] = v
	}
	merged[MetaServerInfo] = s.implRaw
	m, err := json.Marshal(merged)
	if err != nil {
		b = append(b, s.infoRaw...)
	} else {
		b = append(b, m...)
	}
	return append(b, ',')
}

// capabilities: change notifications travel on subscriptions/listen, which
// a buffered response cannot carry. The extensions are the server's
// (extension.go): the Tasks extension among them while a tool may run as a
// task (tasks.md §Capability Negotiation).
func (modernEra) capabilities(s *Server, live bool) *ServerCapabilities {
	c := s.serverCapabilities(live)
	c.Extensions = s.extensionCaps(s.reg.Load(), true)
	return c
}

func (modernEra) inputRequired(ctx context.Context, s *Server, r *Request, ir *InputRequiredError, b stateBinding) ([]byte, error) {
	res, err := s.encodeInputRequired(ctx, r, ir, b)
	r.inputRes = err == nil
	return res, err
}

func (modernEra) paramHeaders(h http.Header) http.Header { return h }

// serves: a tool that needs a session is not served to 2026-07-28 clients.
func (modernEra) serves(st *serverTool) bool { return !st.needsSession }

// callsUnlisted: a 2026-07-28 call needs the tool's definition, whose
// x-mcp-header declarations its Mcp-Param headers are checked against.
func (modernEra) callsUnlisted() bool { return false }

func (modernEra) tools(reg *registry) []*serverTool { return reg.modernTools }

func (modernEra) toolEntry(st *serverTool, _ string) json.RawMessage { return st.modernJSON }

func (modernEra) advancedTool(t *Tool) ([]byte, error) { return advancedToolJSON(t, false) }

// structuredContent: any root (2026-07-28 server/tools); a typed tool's
// result has structured content only when its outputSchema is advertised.
func (modernEra) structuredContent(string, *serverTool, []byte) bool { return true }

func (modernEra) resourceNotFoundCode() int { return CodeInvalidParams }

func (modernEra) strictForms() bool { return true }

// discover answers server/discover.
func (s *Server) discover(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	v := struct {
		SupportedVersions []string            `json:"supportedVersions"`
		Capabilities      *ServerCapabilities `json:"capabilities"`
		Instructions      string              `json:"instructions,omitempty"`
	}{s.supportedVersions(), r.era.capabilities(s, !isBuffered(ctx)), s.opts.Instructions}
	return r.encodeResult(v, "server/discover", nil, nil)
}

func (modernEra) name() string { return "modern" }

func (modernEra) renew(context.Context, *Request) error { return nil }

func (modernEra) firstRound(*Request) int { return 0 }

func (modernEra) round(r *Request, counted int) int {
	if r.Input != nil {
		return r.Input.round
	}
	return counted
}

func (modernEra) handOff(_ context.Context, _ *Server, _ *Request, _ []byte, _ int, err error) (roundEnd, error) {
	return roundFailed, err
}

func (modernEra) augmentsTasks() bool { return true }

func (modernEra) cancelled(*Request) bool { return false }

func (modernEra) end(*Request) {}
