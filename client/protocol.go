package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpfn/mcpfn/mcp"
)

// protocol is the era a Conn speaks: the stateless 2026-07-28 revision
// (modernProtocol, protocol_modern.go) or the initialize-based revisions
// (legacyProtocol, protocol_legacy.go). The Client chooses it once, while it
// connects (client.go), before the Conn is handed out; from then on the
// Conn passes every request to it and never asks which era it speaks. This
// is the client half of the seam connect-go calls protocolClient.
//
// Implementations are safe for concurrent use, as a Conn is.
type protocol interface {
	// version is the protocol version in use; it never changes.
	version() string
	// call sends r and returns its complete result, running its input
	// rounds with the Conn's handlers (2026-07-28: input_required results
	// retried; legacy: server requests on the stream answered).
	call(ctx context.Context, r request) (json.RawMessage, error)
	// callOnce sends one round of r. A 2026-07-28 input_required result
	// becomes a Continuation; a legacy call answers its server requests
	// on the stream and never returns one.
	callOnce(ctx context.Context, r request) (json.RawMessage, *Continuation, error)
	// discover sends server/discover, through the cache; a legacy
	// connection has none.
	discover(ctx context.Context, co *callOptions) (*Discovery, error)
	// listen delivers the server's change notifications (Conn.Listen).
	listen(ctx context.Context, f mcp.SubscriptionFilter, ack func(mcp.SubscriptionFilter), fn func(Notification)) error
	// keepTool says whether a tool of a tools/list page is kept, and
	// learns what the era needs to know of it: in 2026-07-28 its
	// x-mcp-header declarations, and a tool whose declarations are invalid
	// is dropped.
	keepTool(t *mcp.Tool) bool
	// notified is told of each server notification, after the Conn's
	// handlers had it.
	notified(n Notification)
	// session returns the id and initialize result of the legacy session
	// of the Conn's own credential ("" and nil in 2026-07-28).
	session() (id string, init *Initialization)
	// close ends what the era holds open: legacy sessions, GET streams.
	close(ctx context.Context) error
}

// arguments returns the raw "arguments" of r's params (nil when absent).
func (r *request) arguments() json.RawMessage {
	for _, f := range r.params {
		if f.key == "arguments" {
			return f.raw
		}
	}
	return nil
}

// request is one MCP request as a Conn hands it to its protocol. It is a
// struct, so that a field can be added without touching every method (as
// connect-go's protocolClientParams), passed to the protocol by value so
// that it stays on the caller's stack.
type request struct {
	method string
	params params
	// co are the call's options; nil means none.
	co *callOptions
	// header holds request-specific HTTP headers (Mcp-Param-*).
	header http.Header
	// target is the cache key of a cacheable request: the cursor ("c:" +
	// cursor) or the resource URI.
	target string
	// tool names the tool of a toolCall; its arguments are the params'
	// "arguments" (arguments).
	tool string
	// cacheable: a complete result may be cached (2026-07-28
	// server/utilities/caching).
	cacheable bool
	// toolCall marks a tools/call of CallTool or CallToolOnce.
	toolCall bool
	// meta, when set, replaces the era's fixed _meta members (without
	// braces): the entries a Middleware left in Call.Meta.
	meta []byte
	// mwHeader are the HTTP headers a Middleware set (Call.Header).
	mwHeader http.Header
}

// The protocol versions this client speaks, newest first: the stateless
// revisions, and the initialize-based ones.
var (
	modernVersions = [...]string{mcp.ProtocolVersion20260728}
	legacyVersions = [...]string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}
)

// isLegacy reports whether v is an initialize-based version this client
// speaks.
func isLegacy(v string) bool {
	for _, lv := range legacyVersions {
		if lv == v {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// pickVersion returns the newest modern version of list this client
// speaks, or "".
func pickVersion(list []string) string {
	for _, v := range modernVersions {
		if contains(list, v) {
			return v
		}
	}
	return ""
}

// pickLegacy returns the newest legacy version of list this client speaks,
// or the newest it speaks when list names none.
func pickLegacy(list []string) string {
	for _, v := range legacyVersions {
		if contains(list, v) {
			return v
		}
	}
	return legacyVersions[0]
}

// hasLegacy reports whether list names a legacy version this client speaks.
func hasLegacy(list []string) bool {
	for _, v := range list {
		if isLegacy(v) {
			return true
		}
	}
	return false
}

// legacyEvidence reports whether a failed modern request means "this server
// speaks an initialize-based revision": 400/404/405 with an empty or
// unrecognised body, or -32601 (2026-07-28 streamable-http §Backward
// Compatibility). -32020/-32021/-32022 are modern; 401/403 are no evidence.
func legacyEvidence(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		}
		return false
	}
	var re *mcp.Error
	if errors.As(err, &re) {
		switch re.Code {
		case mcp.CodeMethodNotFound:
			return true
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
			return false
		}
		// A JSON-RPC error we do not recognise on a 400/404/405 is as good
		// as an unrecognised body: legacy servers answer the unknown
		// server/discover (or a request without a session) that way.
		switch re.ResponseStatus() {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		}
	}
	return false
}
