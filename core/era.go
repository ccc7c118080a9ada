package core

import (
	"context"
	"encoding/json"
	"net/http"
)

// era is what differs between the 2026-07-28 revision (modernEra,
// era_modern.go) and the legacy initialize revisions 2025-11-25,
// 2025-06-18 and 2025-03-26 (legacyEra, era_legacy.go) once a request is
// classified (isModernRequest). Both eras share the method table
// (methods.go) and the method handlers; a Request holds its era, and the
// handlers ask it wherever the wire differs. See docs/design.md, "Two
// eras, one endpoint".
//
// The implementations are empty structs: calling through the interface
// allocates nothing.
type era interface {
	// errorStatus is the HTTP status of a JSON-RPC error answer whose error
	// carries no status of its own.
	errorStatus(code int) int
	// appendResultHead appends, each followed by a comma, the members a
	// result carries before its _meta: resultType and the cache hint of
	// cacheMethod ("" for none; hint overrides the configured one).
	appendResultHead(b []byte, r *Request, cacheMethod string, hint *cacheWire) []byte
	// appendMeta appends `"_meta":{...},` when there is anything to send:
	// the handler's user meta, and serverInfo where the era carries it.
	appendMeta(b []byte, r *Request, user Meta) []byte
	// inputRequired answers a handler that asked for input: a sealed
	// input_required result, or a hand-over to the legacy bridge.
	inputRequired(ctx context.Context, s *Server, r *Request, ir *InputRequiredError, b stateBinding) ([]byte, error)
	// paramHeaders returns the headers Mcp-Param-* values are checked
	// against, or nil where the era has none.
	paramHeaders(r *Request) http.Header
	// serves reports whether the era lists and calls the tool.
	serves(st *serverTool) bool
	// tools returns the registered tools the era lists, sorted by name.
	tools(reg *registry) []*serverTool
	// toolEntry returns the prepared tools/list entry of st.
	toolEntry(st *serverTool, r *Request) json.RawMessage
	// advancedTool encodes a tool an advanced list handler returned.
	advancedTool(t *Tool) ([]byte, error)
	// structuredContent reports whether a tools/call result of st (nil
	// for results no registered tool produced) carries its structured
	// content sj (compact JSON) as structuredContent.
	structuredContent(r *Request, st *serverTool, sj []byte) bool
	// resourceNotFoundCode is the JSON-RPC code of a missing resource.
	resourceNotFoundCode() int
	// notifies reports whether change notifications can reach the client
	// (live is false when the response is buffered).
	notifies(live bool) bool
	// strictForms reports whether form elicitations must use the
	// 2026-07-28 shapes only (no legacy titled-enum enumNames).
	strictForms() bool
}

// The two eras.
var (
	eraModern era = modernEra{}
	eraLegacy era = legacyEra{}
)
