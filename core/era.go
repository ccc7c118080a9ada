package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// era is the protocol a POSTed message speaks: the 2026-07-28 revision
// (modernEra) or the initialize revisions 2025-11-25, 2025-06-18 and
// 2025-03-26 (legacyEra), as connect-go's protocolHandler is one of its
// wire protocols. The door (ServeHTTP) classifies a message once (eraOf)
// and hands it, with the exchange that answers it and carries the era, to
// the era's open, which builds the Request with its method from the era's
// table (or answers a message that is not a request). Every request then
// takes the one path Server.call. From there on nothing names the era: the
// exchange, the Request and the method handlers ask it wherever the wire of
// the two differs, and the differences between the revisions of one era
// are behind its methods too (legacyRevision).
//
// The implementations are empty structs: calling through the interface
// allocates nothing.
type era interface {
	// open reads one JSON-RPC message of the era. A request gets its
	// Request, checked by the era's rules (envelope, headers, version or
	// session, params._meta) and carrying its method (nil when the era does
	// not serve it: the request is refused after authorization), and the
	// context its method runs in (legacy: cancelled by
	// notifications/cancelled, not by a disconnect). A message that is not
	// a request, or that the era answers itself (a notification, a client's
	// response, the legacy handshake), is answered here, and open returns a
	// nil Request and a nil error. An error is the answer.
	open(ctx context.Context, s *Server, hr *http.Request, x *exchange, m *rpcMessage) (context.Context, *Request, error)

	// errorStatus is the HTTP status of a JSON-RPC error answer whose error
	// carries no status of its own.
	errorStatus(code int) int
	// appendResultHead appends, each followed by a comma, the members a
	// result carries before its _meta: resultType and the cache hint of
	// cacheMethod ("" for none; hint overrides the configured one).
	appendResultHead(b []byte, s *Server, cacheMethod string, hint *cacheWire) []byte
	// appendMeta appends `"_meta":{...},` when there is anything to send:
	// the handler's user meta, and serverInfo where the era carries it.
	appendMeta(b []byte, s *Server, user Meta) []byte
	// capabilities returns what the server advertises to a client of the
	// era; live is false when the response is buffered.
	capabilities(s *Server, live bool) *ServerCapabilities
	// inputRequired answers a handler that asked for input: a sealed
	// input_required result, or a hand-over to the legacy bridge (the error
	// bridgeNeeded, which Server.serveRound catches).
	inputRequired(ctx context.Context, s *Server, r *Request, ir *InputRequiredError, b stateBinding) ([]byte, error)
	// paramHeaders returns the headers Mcp-Param-* values are checked
	// against, or nil where the era has none.
	paramHeaders(h http.Header) http.Header
	// serves reports whether the era lists and calls the tool.
	serves(st *serverTool) bool
	// callsUnlisted reports whether, in advanced mode, a call to a tool the
	// list handler does not return reaches CallToolHandler (which then
	// decides) instead of being an unknown tool.
	callsUnlisted() bool
	// tools returns the registered tools the era lists, sorted by name.
	tools(reg *registry) []*serverTool
	// toolEntry returns the prepared tools/list entry of st.
	toolEntry(st *serverTool, version string) json.RawMessage
	// advancedTool encodes a tool an advanced list handler returned.
	advancedTool(t *Tool) ([]byte, error)
	// structuredContent reports whether a tools/call result of st (nil
	// for results no registered tool produced) carries its structured
	// content sj (compact JSON) as structuredContent in revision version.
	structuredContent(version string, st *serverTool, sj []byte) bool
	// resourceNotFoundCode is the JSON-RPC code of a missing resource.
	resourceNotFoundCode() int
	// strictForms reports whether form elicitations must use the
	// 2026-07-28 shapes only (no legacy titled-enum enumNames).
	strictForms() bool
}

// The two eras.
var (
	eraModern era = modernEra{}
	eraLegacy era = legacyEra{}
)

// modernVersions lists, newest first, the stateless revisions the server serves.
var modernVersions = []string{ProtocolVersion20260728}

// legacyVersions lists, newest first, the initialize-based revisions the server serves.
var legacyVersions = []string{ProtocolVersion20251125, ProtocolVersion20250618, ProtocolVersion20250326}

func isModernVersion(v string) bool { return v == ProtocolVersion20260728 }

func isLegacyVersion(v string) bool {
	switch v {
	case ProtocolVersion20251125, ProtocolVersion20250618, ProtocolVersion20250326:
		return true
	}
	return false
}

// eraOf classifies a POSTed message with the request headers h
// (2026-07-28 basic/versioning): modern _meta makes it modern whatever its
// method; a session id, initialize, a legacy MCP-Protocol-Version header or
// no version at all make it legacy; anything else is modern, whose
// validation then answers. The mode narrows it: a modern-only server hands
// a legacy initialize to the legacy era, which answers with the versions
// the server speaks.
func (s *Server) eraOf(h http.Header, m *rpcMessage) era {
	modernMeta := m.scannedMeta().hasVersion
	switch s.opts.Mode {
	case ModeModern:
		if modernMeta || m.method != "initialize" {
			return eraModern
		}
		return eraLegacy
	case ModeLegacy:
		return eraLegacy
	}
	if modernMeta {
		return eraModern
	}
	v := headerGet(h, canonProtocolVersion)
	if m.isResponse && isModernVersion(v) {
		return eraModern // clients do not send responses in 2026-07-28: 400
	}
	if headerGet(h, canonSessionID) != "" || m.method == "initialize" || m.isResponse {
		return eraLegacy
	}
	if v != "" && !isLegacyVersion(v) {
		return eraModern
	}
	return eraLegacy
}

var emptyObject = []byte("{}")

// reply answers a request with its result or its error. A nil result
// without an error means the method wrote its own answer
// (subscriptions/listen); a parked legacy call has already ended its
// response (SSE polling), and a request the client cancelled gets none
// (2025-11-25 basic/utilities/cancellation).
func (s *Server) reply(ctx context.Context, x *exchange, id, res []byte, err error) {
	switch {
	case err == nil && res == nil:
	case err == nil:
		msg, ok := x.enveloped(id, res)
		if !ok {
			msg = jsonwire.AppendResult(make([]byte, 0, responseHeadLen+len(id)+len(res)+1), id, res)
		}
		x.finish(http.StatusOK, msg)
		if ok {
			// msg, and the result within it, were only the response's.
			x.release(s)
		}
	case errors.Is(err, errParked):
	case errors.Is(err, errCancelledByClient):
		x.noResponse()
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client closed the request (2026-07-28 cancels that way,
		// basic/utilities/cancellation): nobody reads an answer, and the
		// handler's error is the cancellation, not a fault.
		s.log.DebugContext(ctx, "request cancelled by the client")
		x.noResponse()
	default:
		s.replyError(ctx, x, id, err)
	}
}

// methodHandler answers one request: it returns the encoded result object.
type methodHandler func(s *Server, ctx context.Context, r *Request, params []byte) ([]byte, error)

// methodSpec describes a method of an era's table.
type methodSpec struct {
	handle methodHandler
	// available reports whether the capability behind the method is served;
	// if not, the method is answered -32601 (404 in 2026-07-28).
	available func(s *Server, reg *registry) bool
	// nameParam is the params member mirrored in Mcp-Name ("name", "uri"
	// or, for the Tasks extension's methods, "taskId"; 2026-07-28).
	nameParam string
	// ownsSession: the handler reads and renews the legacy session itself,
	// so the request costs no separate renewal.
	ownsSession bool
}

func always(*Server, *registry) bool { return true }

// sharedMethods are the methods of both eras.
var sharedMethods = map[string]*methodSpec{
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
}

// methodTable returns the shared methods plus an era's own.
func methodTable(own map[string]*methodSpec) map[string]*methodSpec {
	t := make(map[string]*methodSpec, len(sharedMethods)+len(own))
	for k, v := range sharedMethods {
		t[k] = v
	}
	for k, v := range own {
		t[k] = v
	}
	return t
}

// lookupMethod returns the spec of method in table when the server serves
// it, or nil.
func (s *Server) lookupMethod(table map[string]*methodSpec, method string) *methodSpec {
	spec := table[method]
	if spec == nil || !spec.available(s, s.reg.Load()) {
		return nil
	}
	return spec
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
		r.ClientCapabilities = cloneCaps(r.caps)
		r.ownCaps = true
	}
	return h(s, ctx, r, params)
}

// requestMeta is what the one scan of a request's params._meta found: the
// raw values of the keys the server reads (the last of a repeated key).
type requestMeta struct {
	raw           []byte // the _meta object; nil when absent or not an object
	version       string // MetaProtocolVersion, when hasVersion
	present       bool   // params has a _meta member
	hasVersion    bool
	fault         metaFault
	caps          []byte
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte
}

// metaFault names the first of the reserved 2026-07-28 _meta keys, in
// member order, whose value has the wrong type.
type metaFault uint8

const (
	faultNone    metaFault = iota
	faultVersion           // MetaProtocolVersion is not a string
	faultCaps              // MetaClientCapabilities is not an object
)

func (f metaFault) String() string {
	switch f {
	case faultVersion:
		return MetaProtocolVersion + " must be a string"
	case faultCaps:
		return MetaClientCapabilities + " must be an object"
	}
	return ""
}

// scanMeta reads the params._meta member v of a request (nil when absent)
// once.
func scanMeta(v []byte) requestMeta {
	meta := requestMeta{present: v != nil}
	if !jsonwire.IsObject(v) {
		return meta
	}
	meta.raw = v
	jsonwire.EachMember(meta.raw, func(k, v []byte) bool {
		switch {
		case jsonwire.KeyIs(k, MetaProtocolVersion):
			var ok bool
			if meta.version, ok = jsonwire.RawString(v); !ok && meta.fault == faultNone {
				meta.fault = faultVersion
			}
			meta.hasVersion = true
		case jsonwire.KeyIs(k, MetaClientCapabilities):
			if !jsonwire.IsObject(v) && meta.fault == faultNone {
				meta.fault = faultCaps
			}
			meta.caps = v
		case jsonwire.KeyIs(k, MetaClientInfo):
			meta.clientInfo = v
		case jsonwire.KeyIs(k, MetaLogLevel):
			meta.logLevel = v
		case jsonwire.KeyIs(k, "progressToken"):
			meta.progressToken = v
		}
		return true
	})
	return meta
}

// progress returns the request's progress token: nil when absent or null,
// a string or an integer as sent, and otherwise the -32602 error, in both
// eras (2025-11-25 and 2026-07-28 basic/utilities/progress: "a string or
// integer value").
func (meta *requestMeta) progress() ([]byte, error) {
	v := meta.progressToken
	if v == nil || jsonwire.IsNull(v) {
		return nil, nil
	}
	if v[0] != '"' && !validID(v) {
		return nil, InvalidParamsError("Invalid params: progressToken must be a string or an integer")
	}
	return v, nil
}

// resultTail appends the members every result shares: what the era puts
// before _meta (resultType and the cache hint of cacheMethod, "" for none,
// on modern results) and _meta (serverInfo on modern results, merged with
// the handler's meta).
func (r *Request) resultTail(b []byte, cacheMethod string, userMeta Meta, hint *cacheWire) []byte {
	b = r.era.appendResultHead(b, r.srv, cacheMethod, hint)
	b = r.era.appendMeta(b, r.srv, userMeta)
	if b[len(b)-1] == ',' {
		b = b[:len(b)-1]
	}
	return b
}

// encodeResult marshals v (a struct of method-specific members) and appends
// the common tail.
func (r *Request) encodeResult(v any, cacheMethod string, userMeta Meta, hint *cacheWire) ([]byte, error) {
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
