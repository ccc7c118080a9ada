package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

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
		if s.opts.CallToolHandler != nil {
			return false // advanced mode: the call finds it (findTool)
		}
		st := reg.tools[target]
		return st != nil && r.era.serves(st)
	case "prompts/get":
		return reg.prompts[target] != nil
	case "resources/read":
		if reg.resources[target] != nil {
			return true
		}
		for _, t := range reg.templates {
			if t.re.MatchString(target) {
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

// buildChain wraps the server's own handling in the middleware, the first
// listed outermost, and the request record around all of them.
func (s *Server) buildChain() {
	mw := make([]Middleware, 0, len(s.opts.Middleware)+1)
	if !s.opts.DisableRequestLog {
		mw = append(mw, LogRequests(s.log, s.opts.RequestLogLevel))
	}
	mw = append(mw, s.opts.Middleware...)
	// The request record keeps nothing of a result; a user's middleware
	// may (see Request.resultBuffer).
	s.poolResults = len(s.opts.Middleware) == 0
	if len(mw) == 0 {
		return
	}
	h := Handler(s.serveRound)
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	s.chain = h
}

// targetOf returns the target of a request of method with params (see
// Call.Target).
func targetOf(method string, params []byte) string {
	var member string
	switch method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	case "completion/complete":
		var ref []byte
		jsonwire.EachMember(params, func(k, v []byte) bool {
			if jsonwire.KeyIs(k, "ref") {
				ref = v
			}
			return true
		})
		if !jsonwire.IsObject(ref) {
			return ""
		}
		var name, uri string
		jsonwire.EachMember(ref, func(k, v []byte) bool {
			switch {
			case jsonwire.KeyIs(k, "name"):
				name, _ = jsonwire.RawString(v)
			case jsonwire.KeyIs(k, "uri"):
				uri, _ = jsonwire.RawString(v)
			}
			return true
		})
		if name != "" {
			return name
		}
		return uri
	default:
		return ""
	}
	var t string
	jsonwire.EachMember(params, func(k, v []byte) bool {
		if jsonwire.KeyIs(k, member) {
			t, _ = jsonwire.RawString(v)
		}
		return true
	})
	return t
}

// LogRequests returns the Middleware of the request record: one record per
// round, logged to logger at level (nil: slog.LevelInfo) when the logger
// is enabled for it, with the message "mcp request" and these attributes
// (an attribute without a value is omitted):
//
//	method     string    the JSON-RPC method, e.g. "tools/call"
//	target     string    the tool or prompt name, resource URI or completion ref (Call.Target)
//	era        string    "modern" (2026-07-28) or "legacy"
//	version    string    the protocol revision, e.g. "2026-07-28"
//	status     string    ok, isError, input_required, cancelled or error (Outcome.Status)
//	code       int       the JSON-RPC error code, with status error
//	round      int       Call.Round, when not 0
//	duration   duration  the time the round took, the middleware inside this one included
//	session    string    the first 16 hex digits of the SHA-256 of the legacy session id, never the id
//	principal  string    the authenticated subject (Principal.Subject)
//	client_id  string    the authenticated OAuth client (Principal.ClientID)
//
// The method, version, principal and client_id are cut to LogNameBytes and
// the target to LogURIBytes (Truncate): they are strings the client chose
// (or its token carries), and one request must not make a line of
// megabytes. It never logs tokens, headers, params, arguments, results or
// error messages (a -32603's cause is logged apart, at error, cut to
// LogErrorBytes). The server installs it outermost, before
// ServerOptions.Middleware, with ServerOptions.Logger and RequestLogLevel,
// unless DisableRequestLog is set.
func LogRequests(logger *slog.Logger, level slog.Leveler) Middleware {
	if logger == nil {
		logger = slog.Default()
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) (*Outcome, error) {
			lv := slog.LevelInfo
			if level != nil {
				lv = level.Level()
			}
			if !logger.Enabled(ctx, lv) {
				return next(ctx, c)
			}
			start := time.Now()
			out, err := next(ctx, c)
			d := time.Since(start)
			var buf [11]slog.Attr
			// The method (a legacy method the server does not serve
			// reaches the chain), the target, the version and the
			// principal's names are strings a client chose or a token
			// carried: bounded (Truncate), at no cost when short.
			a := append(buf[:0], slog.String("method", Truncate(c.Method, LogNameBytes)))
			if c.Target != "" {
				a = append(a, slog.String("target", Truncate(c.Target, LogURIBytes)))
			}
			status := out.Status(err)
			a = append(a, slog.String("era", c.era.name()), slog.String("version", Truncate(c.ProtocolVersion, LogNameBytes)), slog.String("status", status))
			if err != nil {
				a = append(a, slog.Int("code", CodeOf(err)))
			}
			if c.Round != 0 {
				a = append(a, slog.Int("round", c.Round))
			}
			a = append(a, slog.Duration("duration", d))
			if c.Session != nil {
				a = append(a, slog.String("session", sessionDigest(c.Session.ID())))
			}
			if p := c.Principal; p != nil {
				if p.Subject != "" {
					a = append(a, slog.String("principal", Truncate(p.Subject, LogNameBytes)))
				}
				if p.ClientID != "" {
					a = append(a, slog.String("client_id", Truncate(p.ClientID, LogNameBytes)))
				}
			}
			logger.LogAttrs(ctx, lv, "mcp request", a...)
			return out, err
		}
	}
}

// sessionDigest names a session in logs without its id, which is a bearer
// credential of the session (2025-11-25 basic/transports, session
// management): 64 bits of its SHA-256, enough to tell the sessions of one
// deployment apart and to find one whose id is known.
func sessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}
