package core

import (
	"context"
	"encoding/json"
	"net/http"
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

	// name is the era as the request record logs it: "modern" or "legacy".
	name() string
	// renew runs before a request's first round: the legacy era renews
	// the request's session (unless its method does so itself).
	renew(ctx context.Context, r *Request) error
	// firstRound is the round a request starts at: 0, or for a legacy
	// call resumed by SSE polling the bridge's rounds already asked.
	firstRound(r *Request) int
	// round returns the round a request's input answers, given the one
	// counted so far: legacy counts the bridge's rounds; 2026-07-28
	// carries it in requestState, known once the handler has verified it.
	round(r *Request, counted int) int
	// cancelled reports whether the client cancelled the request by
	// notifications/cancelled (legacy; 2026-07-28 cancels by closing the
	// request, which ends its context).
	cancelled(r *Request) bool
	// end releases what the era holds for a request once it is answered
	// (legacy: its entry among the session's requests in flight).
	end(r *Request)
	// handOff ends a round of r (with params, in round) whose handler
	// returned err: the legacy era hands a request for input
	// (bridgeNeeded) to the bridge, which asks the client and puts its
	// answers in r.Input for the next round; any other err is the
	// round's (roundFailed). It takes no *Call, which stays on the stack.
	handOff(ctx context.Context, s *Server, r *Request, params []byte, round int, err error) (roundEnd, error)
	// augmentsTasks reports whether a call may become a task (the Tasks
	// extension is of 2026-07-28).
	augmentsTasks() bool
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
	modernMeta := m.meta.hasVersion
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

// Modern reports whether the request speaks 2026-07-28 (no session, per-request
// _meta) rather than a legacy revision.
func (r *Request) Modern() bool { return r.era == eraModern }
