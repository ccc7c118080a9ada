package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpfn/mcpfn/mcp"
)

// Mode selects the protocol era a Conn speaks.
type Mode int

// Modes.
const (
	// ModeAuto probes the server with server/discover and picks the era from
	// the answer (2026-07-28 basic/transports/streamable-http §Backward
	// Compatibility). The Client remembers the era found per endpoint.
	ModeAuto Mode = iota
	// ModeModern speaks the stateless 2026-07-28 revision only.
	ModeModern
	// ModeLegacy speaks the initialize-based revisions only.
	ModeLegacy
)

// String returns "auto", "modern" or "legacy".
func (m Mode) String() string {
	switch m {
	case ModeModern:
		return "modern"
	case ModeLegacy:
		return "legacy"
	}
	return "auto"
}

// Defaults.
const (
	// DefaultMaxRounds bounds the input rounds of one request (see
	// Options.MaxRounds).
	DefaultMaxRounds = 8
	// DefaultMaxResponseBytes bounds one response body or SSE event.
	DefaultMaxResponseBytes = 32 << 20
	// DefaultMaxSessions bounds the legacy sessions kept for per-call
	// credentials.
	DefaultMaxSessions = 8
	// DefaultCacheEntries bounds the result cache.
	DefaultCacheEntries = 512
	// DefaultMaxTTL caps the freshness lifetime a server may grant.
	DefaultMaxTTL = time.Hour
	// DefaultRequestTimeout bounds one HTTP exchange whose answer is not a
	// stream, from sending the request to the last byte of the answer (see
	// Options.RequestTimeout). A minute is what the official TypeScript SDK
	// allows a request by default, so servers built against it already
	// answer within it or stream.
	DefaultRequestTimeout = time.Minute
	// DefaultStreamIdleTimeout bounds the silence of an SSE stream (see
	// Options.StreamIdleTimeout): twenty times the 15 s keep-alive interval
	// mcpfn servers use, long enough for servers that send none during a
	// slow step.
	DefaultStreamIdleTimeout = 5 * time.Minute
	// DefaultMaxRetries bounds the retries of a request the server refused
	// for now with HTTP 429 or 503 (see Options.MaxRetries).
	DefaultMaxRetries = 2
	// DefaultMaxRetryWait caps the wait before such a retry (see
	// Options.MaxRetryWait): long enough for a server that sheds load for
	// a few seconds, short enough that a caller is not held for minutes
	// without knowing why.
	DefaultMaxRetryWait = 10 * time.Second
)

// Options configures a Client, and so every Conn it hands out. A nil
// *Options means defaults. The struct is copied by New (and by the
// package-level Connect, Discover, Adopt and InitializeLegacy); later
// changes have no effect.
type Options struct {
	// Mode selects the era. Zero is ModeAuto.
	Mode Mode
	// HTTPClient sends the requests. Nil means a client on
	// http.DefaultTransport that follows no redirects. RequestTimeout and
	// StreamIdleTimeout apply whatever the client; a client's own Timeout
	// also applies, and cuts streams.
	HTTPClient *http.Client
	// RequestTimeout bounds each HTTP exchange until its response headers
	// arrive and, when the answer is not an SSE stream (a JSON body, an
	// error, a 202), until its whole body has been read: a server that
	// answers late, or dribbles its body a byte at a time, fails the call
	// with an error matching ErrTimeout. An SSE stream is bounded by
	// StreamIdleTimeout and ctx instead, so a long tools/call or a
	// subscription is not cut. Zero means DefaultRequestTimeout; negative
	// means none.
	RequestTimeout time.Duration
	// StreamIdleTimeout bounds the silence of an SSE stream (the response
	// stream of a request, subscriptions/listen, the legacy GET stream): when
	// no byte at all, neither event nor keep-alive comment, arrives for this
	// long, the call fails with an error matching ErrTimeout, and a legacy
	// GET stream is opened again. Zero means DefaultStreamIdleTimeout;
	// negative means none.
	StreamIdleTimeout time.Duration
	// TokenSource supplies the bearer token of every request; nil means
	// none. If it also implements Challenger, 401 and insufficient_scope
	// 403 responses are answered through it. Its tokens go to every
	// endpoint the Client connects to: a TokenSource that serves one
	// protected resource (an oauth.Source) belongs to a Client that
	// connects to that resource only.
	TokenSource TokenSource
	// Header holds extra headers sent on every request (copied by New).
	// An Authorization here is the Client's static credential: a
	// TokenSource token, or a call's own credential, replaces it.
	Header http.Header
	// ClientInfo names this client. Zero means {"mcpfn-client", "0"}.
	ClientInfo mcp.Implementation
	// OmitClientInfo leaves io.modelcontextprotocol/clientInfo out of
	// 2026-07-28 requests (it is sent by default).
	OmitClientInfo bool

	// Elicitation answers elicitation requests; nil means the capability is
	// not declared.
	Elicitation ElicitationHandler
	// ElicitationURL declares URL-mode elicitation as well as form mode.
	ElicitationURL bool
	// ElicitationDefaults fills the defaults of requestedSchema into an
	// accepted form that omits those fields, and declares so.
	ElicitationDefaults bool
	// Sampling answers sampling/createMessage requests; nil means not
	// declared.
	Sampling SamplingHandler
	// Roots answers roots/list requests; nil means not declared.
	Roots RootsHandler
	// Tasks declares the Tasks extension (io.modelcontextprotocol/tasks,
	// SEP-2663) in the client capabilities of every 2026-07-28 request: a
	// server may then answer a tools/call with a task, which CallTool and
	// CallToolOnce wait for (polling tasks/get, answering the task's input
	// requests with the handlers above, cancelling it when the call's
	// context ends) and CallToolTask hands out (TaskHandle). Legacy
	// connections ignore it. False declares nothing, and a server must
	// answer every call synchronously (a tool that needs a task fails
	// with -32021).
	Tasks bool
	// Extensions declares extensions (SEP-2133), each identifier with its
	// settings object (nil: {}), in the client capabilities: in every
	// 2026-07-28 request's _meta and in the legacy initialize. A server
	// answers the methods of an extension the client did not declare with
	// -32021. Conn.ServerExtensions reads the server's; Conn.Request sends
	// an extension's requests. The Tasks extension is declared by Tasks,
	// not here.
	Extensions map[string]map[string]any

	// Notification receives every notification the server sends that is not
	// progress (which goes to the request's CallOptions.Progress function). Calls may
	// come from several goroutines.
	Notification func(method string, params json.RawMessage)
	// LogLevel, if set, asks for notifications/message at or above it
	// (per request in 2026-07-28; logging/setLevel in legacy sessions).
	LogLevel mcp.LoggingLevel

	// NoGETStream keeps legacy sessions from opening the GET stream on
	// which servers send requests and notifications outside a request.
	NoGETStream bool
	// NoInitialize reaches a legacy server without creating a session, for
	// example when each call carries a different user's token
	// (CallOptions.Token): the client skips the initialize handshake, sends
	// no Mcp-Session-Id and no MCP-Protocol-Version header, and reports
	// version 2025-03-26 with empty server capabilities. In ModeLegacy,
	// Connect then makes no network call; in ModeAuto it sends only the
	// probe. Per-call credentials get no session of their own either, and
	// no GET stream is opened. Modern connections, and Conns given a
	// SessionID, ignore it.
	NoInitialize bool
	// SessionID, if set, adopts an existing legacy session (from
	// Conn.SessionID of another Conn, or another process) instead of
	// creating one: Connect sends no initialize and no probe, whatever the
	// Mode but ModeModern (which is an error), and requests carry this id;
	// every Conn of the Client adopts it. It must be visible ASCII
	// (2025-11-25 basic/transports §Session Management). When the server
	// answers the id with 404, the Conn starts a session of its own. Close
	// does not end an adopted session, only sessions the Conn created.
	SessionID string
	// LegacyVersion is the protocol version a legacy initialize asks for:
	// 2025-11-25, 2025-06-18 or 2025-03-26. The server may answer with
	// another it supports (2025-11-25 basic/lifecycle §Version
	// Negotiation), which the Conn then speaks (ProtocolVersion). Zero
	// means the newest this client speaks, or after a ModeAuto probe whose
	// answer names legacy versions, the newest of those.
	LegacyVersion string
	// SessionVersion is the protocol version of the session SessionID
	// names (Conn.ProtocolVersion of the Conn that created it); it must be
	// a legacy version. Zero means 2025-11-25.
	SessionVersion string

	// MaxRetries bounds the retries of a request the server refused for
	// now, with HTTP 429 (Too Many Requests) or 503 (Service Unavailable):
	// answers that say it did not process the request, so that any request
	// may be sent again, tools/call included. Before each retry the client
	// waits what the response's Retry-After asks for (RFC 9110 §10.2.3:
	// delta-seconds or an HTTP-date), or without one 1 s, then 2 s, and
	// so on, up to MaxRetryWait. It does not wait, and fails at once, when
	// Retry-After asks for longer than MaxRetryWait or than the call's
	// context leaves; the context ending during a wait ends the call with
	// its error. The error after the last attempt is a *RetryLaterError,
	// matching ErrRetryLater, which says when to retry. Other failures
	// (a transport error, a broken stream, another status) are not retried
	// here. Zero means DefaultMaxRetries; negative means none.
	MaxRetries int
	// MaxRetryWait caps the wait before a retry (see MaxRetries). Zero
	// means DefaultMaxRetryWait; negative allows no wait: a response
	// without Retry-After, or with 0, is retried at once, any other fails.
	MaxRetryWait time.Duration

	// MaxRounds bounds the input rounds of one request: the retries of a
	// 2026-07-28 multi round-trip request, and the server requests for input
	// (elicitation/create, sampling/createMessage, roots/list; one round
	// each) one legacy call answers, across its stream's resumptions. The
	// round after the last is a *MaxRoundsError (a legacy call is then
	// cancelled). Zero means DefaultMaxRounds.
	MaxRounds int
	// MaxResponseBytes bounds one response body or SSE event. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// MaxSessions bounds the legacy sessions held for per-call credentials.
	// Zero means DefaultMaxSessions.
	MaxSessions int
	// CacheEntries bounds the result cache, which the Conns of a Client
	// share; negative disables caching. Zero means DefaultCacheEntries.
	CacheEntries int
	// MaxTTL caps the lifetime a server's ttlMs may grant. Zero means
	// DefaultMaxTTL.
	MaxTTL time.Duration
	// Middleware wraps the sending of every request of the Client's Conns,
	// the first outermost (see Middleware for what one request is). Nil
	// or empty means none, at no cost; nil entries are skipped. New reads
	// the slice; a later change to it has no effect.
	Middleware []Middleware
	// Logger receives warnings (tools dropped for invalid x-mcp-header
	// declarations, failed cleanup). Nil means slog.Default() (as it is when
	// the client is built); slog.New(slog.DiscardHandler) silences them.
	Logger *slog.Logger
}

// ElicitRequest is an elicitation/create request, from an input_required
// result (2026-07-28) or a server request (legacy).
type ElicitRequest struct {
	// Mode is "form" or "url" (an absent mode is "form").
	Mode    string
	Message string
	// RequestedSchema is the form's schema, raw (form mode).
	RequestedSchema json.RawMessage
	// URL is the page to show the user (URL mode). The client never opens
	// it itself.
	URL string
	// ElicitationID identifies a legacy URL-mode elicitation.
	ElicitationID string
}

// ElicitationHandler asks the user and returns the answer: its Action
// (mcp.ActionAccept, mcp.ActionDecline or mcp.ActionCancel), and with an
// accepted form the form's Content, which is the only case Content is sent
// in. A nil answer is a cancel. It must honour ctx.
type ElicitationHandler func(ctx context.Context, req *ElicitRequest) (*mcp.ElicitResult, error)

// SamplingHandler answers sampling/createMessage: params and result are raw
// CreateMessageRequest params and CreateMessageResult.
type SamplingHandler func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

// RootsHandler answers roots/list.
type RootsHandler func(ctx context.Context) ([]mcp.Root, error)

// Progress is a notifications/progress for one request.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// CacheMode chooses how one call uses the result cache.
type CacheMode int

// Cache modes.
const (
	// CacheDefault serves a fresh cached result and stores new ones.
	CacheDefault CacheMode = iota
	// CacheRefresh skips the lookup but stores the new result.
	CacheRefresh
	// CacheBypass neither reads nor writes the cache.
	CacheBypass
)

// CallOptions are the options of one call, the last argument of every
// request method; nil is a call with none (the common call, which allocates
// nothing).
type CallOptions struct {
	// Progress, when set, asks for progress notifications of this request
	// (a progressToken in _meta) and receives them.
	Progress func(Progress)

	// Token, when not "", is sent as this call's bearer token instead of
	// the TokenSource's (and instead of any Authorization in
	// Options.Header). A call with its own credential never triggers a
	// challenge, bypasses the cache (it neither reads nor stores entries),
	// and in legacy sessions runs in a session of its own credential. To
	// send a call with no Authorization at all, give Header an empty
	// Authorization value.
	Token string

	// Header adds HTTP headers to this call; they replace headers of the
	// same name from Options.Header. An Authorization header, in any
	// spelling, is the call's own credential, exactly as Token (its first
	// value is sent; "" sends none). Token, when set, wins over it.
	Header http.Header

	// Cache is the call's cache mode (Options.Cache).
	Cache CacheMode

	// RawResult, when set, receives the call's complete result, as the
	// server sent it, when the call succeeds: the bytes behind the decoded
	// value the method returns (for a multi round-trip call, the last
	// round's). A result served from the cache is the cached bytes; they
	// must not be modified.
	RawResult *json.RawMessage

	// Name is the Mcp-Name header of a 2026-07-28 request of an extension
	// method that mirrors a params member in it (2026-07-28
	// basic/transports, "Routing Headers"; MethodOptions.NameParam on an
	// mcpfn server). Core methods ignore it: the client derives theirs.
	Name string

	// TaskStatus, when set, is handed the task of a tools/call each time
	// its status or statusMessage changes (Options.Tasks): first as the
	// server created it, then as each tasks/get that changed them
	// describes it. It is called from the goroutine waiting for the task,
	// one call at a time, and must not keep or modify the task.
	TaskStatus func(*mcp.DetailedTask)
}

// callOptions are the options of one call as the request path reads them.
// A nil *callOptions is a call given none; its methods read it as the zero
// value.
type callOptions struct {
	progress func(Progress)
	// authz is the Authorization value of the call's own credential (""
	// sends none); hasAuth says the call has one: Token, or an
	// Authorization header in Header.
	authz     string
	hasAuth   bool
	cacheMode CacheMode
	header    http.Header // never holds Authorization (see authz)
	// noVersionRetry: the probe retries -32022 itself.
	noVersionRetry bool
	// raw, when set, receives the complete result as received.
	raw *json.RawMessage
	// taskStatus, when set, is told of a task's status changes.
	taskStatus func(*mcp.DetailedTask)
	// name is CallOptions.Name.
	name string
}

// resolve returns the call's options as the request path reads them; nil
// for none.
func (o *CallOptions) resolve() *callOptions {
	if o == nil {
		return nil
	}
	co := &callOptions{progress: o.Progress, cacheMode: o.Cache, raw: o.RawResult, taskStatus: o.TaskStatus, name: o.Name}
	for k, vs := range o.Header {
		if len(vs) == 0 {
			continue
		}
		k = http.CanonicalHeaderKey(k)
		if k == "Authorization" {
			co.authz, co.hasAuth = vs[0], true
			continue
		}
		if co.header == nil {
			co.header = http.Header{}
		}
		co.header[k] = append(co.header[k], vs...)
	}
	if o.Token != "" {
		co.authz, co.hasAuth = "Bearer "+o.Token, true
	}
	return co
}

// taskStatusFn returns the call's task status function, or nil.
func (co *callOptions) taskStatusFn() func(*mcp.DetailedTask) {
	if co == nil {
		return nil
	}
	return co.taskStatus
}

// keepRaw stores raw where CallOptions.RawResult asked.
func (co *callOptions) keepRaw(raw json.RawMessage) {
	if co != nil && co.raw != nil {
		*co.raw = raw
	}
}

// ownAuth returns the call's own credential, if it has one: the
// Authorization value to send ("" sends none).
func (co *callOptions) ownAuth() (authz string, ok bool) {
	if co == nil {
		return "", false
	}
	return co.authz, co.hasAuth
}

// cache returns the call's cache mode.
func (co *callOptions) cache() CacheMode {
	if co == nil {
		return CacheDefault
	}
	return co.cacheMode
}

// headers returns the call's extra headers (never Authorization).
func (co *callOptions) headers() http.Header {
	if co == nil {
		return nil
	}
	return co.header
}

// progressFn returns the call's progress function, or nil.
func (co *callOptions) progressFn() func(Progress) {
	if co == nil {
		return nil
	}
	return co.progress
}

// versionRetry reports whether a -32022 naming the version sent may be
// retried (the probe retries it itself).
func (co *callOptions) versionRetry() bool { return co == nil || !co.noVersionRetry }

// credentialOnly returns the options of a request a call makes on its own
// behalf (the tools/list of an x-mcp-header walk): the call's credential
// and headers, cache mode m, nothing else.
func (co *callOptions) credentialOnly(m CacheMode) *callOptions {
	if co == nil {
		if m == CacheDefault {
			return nil
		}
		return &callOptions{cacheMode: m}
	}
	return &callOptions{authz: co.authz, hasAuth: co.hasAuth, header: co.header, cacheMode: m}
}
