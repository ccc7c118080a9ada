package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// Handler runs one round of an MCP request: the server's own handling of
// the method (its authorization, the method table, the user's handler) or
// a Middleware around it. It returns the round's Outcome, or the error the
// request is answered with: an *Error is that JSON-RPC error, any other
// error a -32603 "Internal error" whose text is logged, never sent.
type Handler func(ctx context.Context, c *Call) (*Outcome, error)

// Middleware wraps a Handler: it may look at the Call before calling next,
// change the context next runs in (a tracing span, a deadline), refuse the
// request by returning an error without calling next, and look at the
// Outcome next returns. ServerOptions.Middleware lists them; the first
// listed is the outermost (it runs first and sees the Outcome last).
//
// A Middleware runs after authentication (ServerOptions.Authenticator) and
// before the method's authorization and handler, for every request of both
// eras that reaches a method: a POSTed request, each request of a
// 2025-03-26 batch, a legacy call resumed by SSE polling. Messages that are
// not requests (notifications, the client's responses, the legacy
// initialize handshake) and requests refused before they reach a method
// (a malformed envelope or _meta, an unsupported protocol version, an
// unknown session, a 2026-07-28 method the server does not serve or whose
// Mcp-* headers do not match its body) do not reach it. The authorization
// of the method and its target (Authenticator.Authorize) runs inside the
// chain, so a middleware sees its refusals. Because every adapter
// (net/http, Lambda, Cloud Functions) serves through Server.ServeHTTP, a
// Middleware sees the requests of every adapter.
//
// A Middleware is called concurrently; it calls next at most once, must
// not change the Call or the Request it embeds, and must not keep either
// after it returns. A panic in a Middleware is answered as a handler's is:
// a -32603, logged with its stack.
type Middleware func(next Handler) Handler

// Call is one round of a request, as a Middleware sees it. It embeds the
// Request the handler gets: Method, ID (the raw JSON-RPC id),
// ProtocolVersion, Modern() (the era: 2026-07-28 or legacy), Meta (the raw
// params._meta, where 2026-07-28 clients put traceparent, tracestate and
// baggage; SEP-414), Header (the HTTP request headers, e.g. traceparent;
// nil when not served over HTTP), Principal (the authenticated caller, or
// nil) and Session (the legacy session, or nil; always nil in 2026-07-28).
//
// A request runs one round, except a legacy request whose handler asks for
// input: the bridge asks the client over the request's SSE stream, and the
// handler runs again with the answers, each run a round of its own (the
// chain is called again with Round one higher). A 2026-07-28 request is
// always one round: asking for input ends it with an input_required result,
// and the client's retry is a new request.
type Call struct {
	*Request
	// Target is what the method acts on: the tool name (tools/call), the
	// prompt name (prompts/get), the resource URI (resources/read), the
	// ref's prompt name or resource URI (completion/complete); "" for other
	// methods or when params lack it.
	Target string
	// Params is the raw params object ({} when the request had none). It
	// holds the client's arguments: never log it.
	Params json.RawMessage
	// Round counts the input rounds before this one in the logical call: 0
	// on a first round. Legacy: the bridge rounds already asked (in this
	// request or, resumed by SSE polling, in earlier ones), known before
	// next runs. 2026-07-28: the rounds the request's sealed requestState
	// records, known once next has returned (the state is verified by the
	// method's handler).
	Round int

	first    bool    // the round that authorizes and looks up the method
	again    bool    // the bridge has the answers: run another round
	parked   bool    // the bridge's requests went out; the response has ended
	out      Outcome // the terminal's outcome, returned by pointer
	isError  bool    // set by the tools/call encoder
	inputRes bool    // set by the 2026-07-28 input_required encoder
}

// HTTPRequest returns the HTTP request that carried the request (for a
// batch, the batch's; for a legacy call resumed by SSE polling, the
// resuming GET), for what a middleware reads besides Header: the remote and
// local addresses, Host, the URL, the protocol. Its body has been read; it
// must not be changed.
func (c *Call) HTTPRequest() *http.Request { return c.hr }

// MetaString returns the string value of key in the request's params._meta
// (the last, when repeated), e.g. "traceparent", "tracestate" or "baggage"
// (2026-07-28: W3C trace context in _meta, SEP-414). It reports false when
// _meta has no such member or its value is not a string.
func (c *Call) MetaString(key string) (string, bool) {
	var v string
	var ok bool
	jsonwire.EachMember(c.Meta, func(k, raw []byte) bool {
		if jsonwire.KeyIs(k, key) {
			v, ok = jsonwire.RawString(raw)
		}
		return true
	})
	return v, ok
}

// Served reports whether the server serves the request's Method in its
// era. A method it does not serve (one it does not know, or whose
// capability it lacks) reaches the chain only from a legacy client, and
// the round ends in -32601: the name is the client's choice, so a
// middleware that names spans or labels metrics after the method uses one
// fixed name for all of them (the otel module: "_OTHER").
func (c *Call) Served() bool { return c.spec != nil }

// TargetFound reports whether the server has the request's Target: a tool
// it registered (AddTool) and serves in the request's era, or one its
// ListToolsHandler lists; a prompt it registered; a resource it registered
// or a URI one of its resource templates matches; for completion/complete,
// the prompt, resource or resource template the ref names. It is false for
// a method without a target and for a target the server does not have,
// whose name is the client's choice: a middleware that names spans or
// labels metrics after Target uses one fixed name for those, so that
// invented names cannot create new ones without bound (a legacy call of an
// unlisted tool, which CallToolHandler may serve under any name, is not
// found either).
//
// What the server registered is known before next runs (a map lookup, or
// a template match for a resource URI that is not registered); a tool only
// ListToolsHandler lists is found by the call, which walks the list, so
// TargetFound reports it once next has returned.
func (c *Call) TargetFound() bool {
	if c.Target == "" || c.spec == nil {
		return false
	}
	return c.targetFound || c.srv.hasTarget(c.Request, c.Target)
}

// hasTarget reports whether the server's registry has target, the Target
// of a request r of a served method (Call.TargetFound).
func (s *Server) hasTarget(r *Request, target string) bool {
	reg := s.reg.Load()
	switch r.Method {
	case "tools/call":
		// A tool only ListToolsHandler lists is found by the call
		// (findTool).
		st := reg.tools[target]
		return st != nil && r.era.serves(st)
	case "prompts/get":
		return reg.prompts[target] != nil
	case "resources/read":
		if reg.resources[target] != nil {
			return true
		}
		for _, t := range reg.templates {
			if t.uri.matches(target) {
				return true
			}
		}
	case "completion/complete":
		if reg.prompts[target] != nil || reg.resources[target] != nil {
			return true
		}
		for _, t := range reg.templates {
			if t.tmpl.URITemplate == target {
				return true
			}
		}
	}
	return false
}

// Outcome is how a round ended without a JSON-RPC error.
type Outcome struct {
	// Result is the encoded result object the request is answered with;
	// nil when the round ended otherwise (InputRequired over the legacy
	// bridge, Cancelled, or a method that streams its own answer:
	// subscriptions/listen).
	Result json.RawMessage
	// IsError reports a tools/call result with isError true: the tool
	// failed and said so to the model (not a JSON-RPC error).
	IsError bool
	// InputRequired reports that the round ended asking the client for
	// input: in 2026-07-28, Result is the input_required result; over the
	// legacy bridge, the client has been asked (and, unless the response
	// was parked for SSE polling, has answered: the next round follows).
	InputRequired bool
	// Cancelled reports that the client cancelled the request
	// (notifications/cancelled in the legacy era, closing the request in
	// 2026-07-28): it gets no response.
	Cancelled bool
}

// Status names how the round ended, as the request record logs it:
// "ok", "isError", "input_required", "cancelled", or "error" when err is
// not nil.
func (o *Outcome) Status(err error) string {
	switch {
	case err != nil || o == nil:
		return "error"
	case o.Cancelled:
		return "cancelled"
	case o.InputRequired:
		return "input_required"
	case o.IsError:
		return "isError"
	}
	return "ok"
}

var errEmptyOutcome = errors.New("core: a Middleware returned neither an Outcome with a Result nor an error")
