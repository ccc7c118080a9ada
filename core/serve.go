package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/mcpfn/mcpfn/internal/jsonwire"
)

// The shared request path: every JSON-RPC request of either era, once its
// era's door (era.open) has read it, takes Server.serve → Server.call (one
// round after another through the middleware chain, the request record
// outermost) → Server.serveRound (authorization, the era's renewal hook,
// the method handler through Server.invoke, the era's input hand-off hook)
// → Server.reply, which writes the result or the error on the exchange.

// serve answers one JSON-RPC message in the era of x, which the door
// chose: the one path of every POSTed message after the door.
func (s *Server) serve(ctx context.Context, x *exchange, hr *http.Request, m *rpcMessage) {
	ctx, r, err := x.era.open(ctx, s, hr, x, m)
	if r == nil && err == nil {
		return // answered by the era
	}
	var res []byte
	if err == nil {
		res, err = s.call(ctx, r, m.params)
	}
	s.reply(ctx, x, m.id, res, err)
}

// call runs the method of r, in every era and for every request (a POST,
// an element of a batch, a resumed legacy call): each round through the
// middleware, and in the first its authorization, the era's method table
// and the renewal of its legacy session, then the handler.
func (s *Server) call(ctx context.Context, r *Request, params []byte) ([]byte, error) {
	defer r.era.end(r)
	if params == nil {
		params = emptyObject
	}
	if s.chain != nil {
		c := &Call{Request: r, Params: params, Round: r.era.firstRound(r), first: true, Target: targetOf(r.Method, params)}
		for {
			out, err := s.runChain(ctx, c)
			if res, again, err := c.after(out, err); !again {
				return res, err
			}
		}
	}
	// Without middleware the round is a static call, and c stays on the
	// stack.
	c := Call{Request: r, Params: params, Round: r.era.firstRound(r), first: true}
	for {
		out, err := s.serveRound(ctx, &c)
		if res, again, err := c.after(out, err); !again {
			return res, err
		}
	}
}

// runChain runs one round through the middleware, turning a panic of a
// middleware into a logged -32603 as invoke does for handlers.
func (s *Server) runChain(ctx context.Context, c *Call) (out *Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "middleware panicked", "method", Truncate(c.Method, LogNameBytes), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			out, err = nil, errors.New("panic")
		}
	}()
	return s.chain(ctx, c)
}

// after reads how a round ended: the request's result or error, or again
// when the bridge has the client's answers and the next round follows.
func (c *Call) after(out *Outcome, err error) (res []byte, again bool, _ error) {
	switch {
	case c.era.cancelled(c.Request) || (out == &c.out && out.Cancelled):
		return nil, false, errCancelledByClient
	case err != nil:
		return nil, false, err
	case c.parked:
		return nil, false, errParked
	case c.again:
		c.again, c.first, c.out = false, false, Outcome{}
		c.Round++
		return nil, true, nil
	case out == &c.out:
		return out.Result, false, nil
	case out == nil || out.Result == nil:
		return nil, false, errEmptyOutcome
	}
	return out.Result, false, nil // a Middleware's own result
}

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

// serveRound is the Handler the middleware wraps: one round of the
// request.
func (s *Server) serveRound(ctx context.Context, c *Call) (*Outcome, error) {
	r := c.Request
	if c.first {
		if s.opts.Authenticator != nil && !targetedMethod(r.Method) {
			// Methods with a target are authorized by their handlers, once
			// the target is known.
			if err := s.authorize(ctx, Operation{Method: r.Method, ProtocolVersion: r.ProtocolVersion}); err != nil {
				return nil, err
			}
		}
		if r.spec == nil {
			return nil, methodNotFound(r.Method)
		}
		if err := r.era.renew(ctx, r); err != nil {
			return nil, err
		}
	}
	r.isError, r.inputRes = false, false
	res, err := s.invoke(ctx, r.spec.handle, r, c.Params)
	c.Round = r.era.round(r, c.Round)
	if r.era.cancelled(r) || (errors.Is(err, context.Canceled) && ctx.Err() != nil) {
		// Cancelled by notifications/cancelled (legacy), or by the client
		// closing its request (2026-07-28, basic/utilities/cancellation).
		c.out = Outcome{Cancelled: true}
		return &c.out, nil
	}
	if err == nil {
		c.out = Outcome{Result: res, IsError: r.isError, InputRequired: r.inputRes}
		return &c.out, nil
	}
	end, err := r.era.handOff(ctx, s, r, c.Params, c.Round, err)
	switch end {
	case roundFailed:
		return nil, err
	case roundCancelled:
		c.out = Outcome{Cancelled: true}
		return &c.out, nil
	case roundParked:
		c.parked = true
	case roundAgain:
		c.again = true
	}
	c.out = Outcome{InputRequired: true}
	return &c.out, nil
}

// roundEnd is how the era ended a round whose handler returned an error
// (era.handOff).
type roundEnd uint8

const (
	roundFailed    roundEnd = iota // the error is the round's
	roundAgain                     // the bridge has the answers in Request.Input: run the next round
	roundParked                    // the bridge's requests went out; the response has ended
	roundCancelled                 // the client cancelled while the bridge asked
)

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

// replyError answers with a JSON-RPC error, with the HTTP status of the
// exchange's era. Errors that are not *Error are logged and sent as a
// generic -32603.
func (s *Server) replyError(ctx context.Context, x *exchange, id []byte, err error) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.ErrorContext(ctx, "request failed", "error", errText(err))
	} else if e.Cause != nil && e.HTTPStatus() >= 500 {
		// A server fault (the session store failed): say what happened.
		s.log.ErrorContext(ctx, "request failed", "code", e.Code, "status", e.HTTPStatus(), "error", errText(e.Cause))
	} else if e.Cause != nil {
		s.log.DebugContext(ctx, "request refused", "code", e.Code, "error", errText(e.Cause))
	}
	s.errorHeaders(ctx, x, e)
	we := toWireError(err)
	status := http.StatusOK
	if e != nil && e.HTTPStatus() != 0 {
		status = e.HTTPStatus()
	} else {
		status = x.era.errorStatus(we.Code)
	}
	x.finish(status, appendErrorResponse(make([]byte, 0, 128), id, we))
}
