package core

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Mode selects which protocol eras a server speaks.
type Mode int

const (
	// ModeAuto serves 2026-07-28 and the legacy revisions on one endpoint,
	// recognising each request's era: a request carrying modern _meta is
	// modern whatever its method; initialize and session traffic is legacy.
	ModeAuto Mode = iota
	// ModeModern serves 2026-07-28 only.
	ModeModern
	// ModeLegacy serves the initialize-based revisions only.
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

// CacheHint is the ttlMs / cacheScope pair sent on cacheable results.
type CacheHint struct {
	// TTL is how long clients may treat the result as fresh. Zero means
	// stale immediately. Negative values are invalid.
	TTL time.Duration
	// Scope is CacheScopePrivate (the default when empty) or CacheScopePublic.
	Scope CacheScope
}

// Defaults.
const (
	// DefaultMaxRequestBytes bounds a request body (413 beyond it).
	DefaultMaxRequestBytes = 4 << 20
	// DefaultPageSize is the number of items per page of the list methods.
	DefaultPageSize = 100
	// DefaultStreamKeepAlive is the interval of SSE keep-alive comments on
	// long-lived streams.
	DefaultStreamKeepAlive = 15 * time.Second
	// DefaultMaxStreamsPerPrincipal bounds the long-lived streams one
	// authenticated principal holds open on an instance.
	DefaultMaxStreamsPerPrincipal = 16
	// DefaultMaxAnonymousStreams bounds the long-lived streams anonymous
	// callers together hold open on an instance.
	DefaultMaxAnonymousStreams = 100
	// DefaultMaxStreams bounds the long-lived streams of an instance.
	DefaultMaxStreams = 1000
)

// Methods whose complete results carry cache hints.
var cacheableMethods = []string{
	"server/discover", "tools/list", "prompts/list", "resources/list",
	"resources/templates/list", "resources/read",
}

// ServerOptions configures a Server. A nil *ServerOptions means all defaults.
// NewServer copies the struct: changing it afterwards has no effect.
type ServerOptions struct {
	// Instructions is sent in server/discover and initialize results.
	Instructions string
	// Logger receives the server's logs. Nil means slog.Default() (as it is
	// when NewServer runs), so that warnings reach the platform's logs even
	// when nothing is configured; pass slog.New(slog.DiscardHandler) for
	// silence.
	Logger *slog.Logger
	// Mode selects the protocol eras served. The zero value is ModeAuto.
	Mode Mode
	// PageSize is the page size of the list methods. Zero means
	// DefaultPageSize.
	PageSize int
	// CacheHints sets the cache hint per method ("server/discover",
	// "tools/list", "prompts/list", "resources/list",
	// "resources/templates/list", "resources/read"). Methods not listed get
	// TTL 0 and scope private.
	CacheHints map[string]CacheHint
	// MaxRequestBytes bounds request bodies. Zero means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// AllowedOrigins lists the exact Origin values (scheme://host[:port])
	// accepted from browsers, or "*" for any. An entry is compared byte for
	// byte with the Origin header, so it is written as browsers send it:
	// lower case, no path or trailing slash, no default port, a host name
	// in its ASCII (xn--) form ("https://app.example.com",
	// "http://localhost:5173"); Validate refuses any other, and "null". A
	// request without Origin is always accepted. When nil, a server reached
	// on a loopback address accepts loopback origins on any port, and any
	// server accepts its own origin (the request's Host); others get 403.
	// An empty, non-nil list accepts no browser origin at all, loopback and
	// the server's own included: every request that carries Origin gets 403
	// (2026-07-28 basic/transports §Security Warning: servers must validate
	// Origin; a server that no browser should reach says so this way).
	AllowedOrigins []string
	// AllowCredentials sends Access-Control-Allow-Credentials: true to the
	// allowed origins, on preflights and responses, so that a browser page
	// may make credentialed requests (cookies, TLS client certificates,
	// cached HTTP authentication) and read their answers (Fetch Standard
	// §3.2.5 CORS protocol and credentials). MCP authorization sends its
	// token in the Authorization header, which needs no credentials mode;
	// set it only for an Authenticator that reads cookies or client
	// certificates. It requires AllowedOrigins to list the origins: Validate
	// refuses it with "*" or with no list, since it would let any page (or
	// any local one) act with the user's credentials.
	AllowCredentials bool
	// AllowedHosts lists extra Host values (host or host:port) accepted by a
	// server reached on a loopback address, which otherwise accepts only
	// localhost, 127.0.0.1 and [::1] on any port (DNS rebinding protection).
	// When set, it also applies to servers not on loopback.
	AllowedHosts []string
	// Authenticator, when set, authenticates every request but CORS
	// preflights, authorizes every JSON-RPC request and serves its metadata
	// document (see Authenticator; package auth provides one). Nil means no
	// authentication.
	Authenticator Authenticator

	// ToolErrorResults reports a plain error of a tool handler (AddTool,
	// AddSessionTool, CallToolHandler: an error that is neither a ToolError,
	// an *Error nor an input-required error) as an isError result whose text
	// is the error's message, as go-sdk does, so the model can act on it. The
	// default (false) logs a plain error and answers -32603 with a generic
	// message, so that no internal detail reaches the client; with
	// ToolErrorResults the error's text is sent to the client: set it only
	// when handlers' errors hold nothing secret. A panic is always -32603.
	ToolErrorResults bool

	// StreamKeepAlive is the interval of SSE comment lines (": keep-alive")
	// on long-lived response streams (subscriptions/listen, the legacy GET
	// stream), which keep proxies and clients from taking a quiet stream for
	// a dead one. Zero means DefaultStreamKeepAlive; negative disables them.
	// It is not a ping: the server sends no JSON-RPC request.
	StreamKeepAlive time.Duration
	// MaxStreamsPerPrincipal bounds the long-lived streams
	// (subscriptions/listen and legacy GET streams, counted together) one
	// authenticated principal holds open on this instance. The stream
	// beyond is refused at once with LimitExceededError (HTTP 429, -31429,
	// data.reason "too_many_streams", Retry-After the keep-alive
	// interval, within which a dead stream is noticed); the open ones keep
	// delivering. A legacy GET stream that replaces the GET stream of its
	// session (one per session) takes over its place. Zero means
	// DefaultMaxStreamsPerPrincipal; negative, no bound.
	MaxStreamsPerPrincipal int
	// MaxAnonymousStreams bounds the long-lived streams of all anonymous
	// callers together on this instance, likewise. Zero means
	// DefaultMaxAnonymousStreams; negative, no bound.
	MaxAnonymousStreams int
	// MaxStreams bounds the long-lived streams of this instance, all
	// callers together; the stream beyond is refused likewise, with
	// data.reason "instance_streams_full". Zero means DefaultMaxStreams;
	// negative, no bound.
	MaxStreams int

	// CompletionHandler answers completion/complete. When nil, the
	// completions capability is not advertised.
	CompletionHandler func(context.Context, *CompleteRequest) (*CompleteResult, error)

	// ListToolsHandler and CallToolHandler, when both set, replace typed
	// tools ("advanced mode"): the server lists and calls tools through them.
	// Calls are still checked (arguments against the tool's input schema,
	// Mcp-Param headers) by finding the tool in the handler's pages (at most
	// 100). A 2026-07-28 call to a tool the pages do not hold gets -32602
	// "Unknown tool" without reaching CallToolHandler: its Mcp-Param headers
	// can only be checked against a definition. A legacy call to such a tool
	// reaches CallToolHandler with the name and unvalidated arguments, and
	// the handler decides the response (return InvalidParamsError for a
	// tool it does not know, as an unknown tool is -32602 in every revision).
	// A page's NextCursor is nil on the last page ("" is a cursor like any
	// other); its TTLMs and CacheScope, where set, replace those of the
	// server's tools/list hint (CacheHints) for that page. A listed tool
	// carries no server settings (ToolOptions): CallToolHandler checks the
	// capabilities a call needs itself (Request.RequireCapabilities).
	//
	// Typed tools (AddTool) and the handlers mix: tools/list gives the
	// typed tools' pages first, then the handler's; a call finds a typed
	// tool first, so a listed tool named like a typed one is left out.
	ListToolsHandler func(context.Context, *ListToolsRequest) (*ListToolsResult, error)
	CallToolHandler  func(context.Context, *CallToolRequest) (*CallToolResult, error)

	// Filter, when set, decides per request which tools, prompts,
	// resources and resource templates exist for the caller (r.Principal,
	// the token in ctx, r.ProtocolVersion): what it hides is left out of
	// tools/list, prompts/list, resources/list and
	// resources/templates/list (ListToolsHandler's pages too), and a
	// tools/call, prompts/get, resources/read or completion/complete of it
	// is answered exactly as for a feature the server does not have
	// (-32602 "Unknown tool", -32602 "Unknown prompt", -32002 resource not
	// found), before its headers are checked or the call is authorized. A
	// resource URI a hidden template matches is read through the next
	// visible template that matches it, if any. Filtered lists are never
	// cached publicly: a "public" CacheHints scope of the list methods and
	// resources/read is sent as "private" (2026-07-28
	// server/utilities/caching). Filter runs once per listed feature per
	// list request; it must be fast and safe for concurrent use. See
	// ListAuthorizer for hiding what the authenticator would refuse.
	Filter func(ctx context.Context, r *Request, f Feature) bool
	// SkipOutputValidation sends every tool's results (typed tools, and
	// CallToolHandler's for a listed tool) without checking their
	// structuredContent against the tool's outputSchema, for handlers
	// that validate their own results. By default a result that does not
	// conform is answered -32603 (see ToolOptions.SkipOutputValidation,
	// the same per typed tool).
	SkipOutputValidation bool

	// Keys provides the HMAC keys that seal requestState. When nil, the
	// server generates a random key of its own (PerProcessKeys reports it):
	// state then does not survive a restart or reach other instances, and an
	// instance that receives a state sealed by another logs a warning (at
	// most one a minute) naming the key id it does not have. Every instance
	// of a deployment needs the same keys: store/secretsmanager, or
	// StaticKeys from a secret. StaticKeys are checked by Validate
	// (secrets of at least MinKeyBytes bytes, valid and distinct ids); keys a
	// provider loads at run time are checked when they are used.
	Keys KeyProvider
	// StateTTL is how long a sealed requestState stays valid; each round
	// renews it. Zero means DefaultStateTTL.
	StateTTL time.Duration

	// Sessions selects how legacy clients get sessions. The zero value is
	// SessionsAuto.
	Sessions SessionMode
	// SessionStore keeps legacy sessions. Nil means an in-process store
	// (the one store/memory exports): fine for one process, wrong behind a load
	// balancer or on serverless platforms, where a shared store such as
	// store/dynamo is needed.
	SessionStore SessionStore
	// SessionIdleTimeout ends a session unused for that long. Zero means
	// DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration
	// MaxSessionsPerPrincipal bounds the sessions of one authenticated
	// principal; at the limit, initialize evicts the least recently used.
	// Zero means DefaultMaxSessionsPerPrincipal; negative, no limit.
	MaxSessionsPerPrincipal int
	// MaxAnonymousSessions bounds the anonymous sessions together, likewise.
	// Zero means DefaultMaxAnonymousSessions; negative, no limit.
	MaxAnonymousSessions int
	// BridgeTimeout bounds how long a legacy call waits for the client's
	// answers to server-to-client requests. Zero means
	// DefaultBridgeTimeout.
	BridgeTimeout time.Duration
	// MaxInputRounds bounds how many times one request may ask the client
	// for input: input_required results of one 2026-07-28 call (counted in
	// its sealed requestState), or rounds of server-to-client requests of
	// one legacy call. The request that would ask once more gets a -32603
	// error saying so. Zero means DefaultMaxInputRounds.
	MaxInputRounds int

	// Middleware wraps every request's handling, in both eras, after
	// authentication: the first listed is the outermost (see Middleware).
	// Nil means none besides the request record.
	Middleware []Middleware
	// OnSessionEnd, when set, is called once a legacy session has ended on
	// this instance through the client's DELETE (2025-11-25
	// basic/transports, session management), after the store has removed
	// it, with the request's context. A session that expires (the store's
	// idle timeout or time to live) or is evicted by the per-principal bound
	// ends inside the store and is not reported: on a serverless platform no
	// instance sees it. It runs on the request's goroutine, so it should be
	// quick; a panic in it is logged and the DELETE still succeeds.
	OnSessionEnd func(ctx context.Context, end SessionEnd)
	// RequestLogLevel is the level of the request record, one per round of
	// every request, logged to Logger by LogRequests (its doc lists the
	// attributes). Nil means slog.LevelInfo: the record is what an
	// operator reads to see what the server did, and a successful call is
	// the common case worth seeing; give slog.LevelDebug to keep it out of
	// an info log. It is read on every request, so a *slog.LevelVar
	// changes it while the server runs.
	RequestLogLevel slog.Leveler
	// DisableRequestLog turns the request record off.
	DisableRequestLog bool

	// ChangeBus carries change notifications (list changes and resource
	// updates) between the server's instances, so that a stream
	// (subscriptions/listen, a legacy GET stream) on one instance hears of
	// a change made on another. Nil means none: a stream hears only of
	// the changes made on its own instance, which is all there is for one
	// process. Behind a load balancer or on serverless platforms give
	// every instance the same shared bus (store/dynamo.ChangeBus,
	// adapters/workers/durable.Changes). See ChangeBus.
	ChangeBus ChangeBus
	// ChangePollInterval is how often an instance holding streams reads
	// ChangeBus: a change made on another instance reaches its streams
	// within about this long. The reads do not grow with the number of
	// streams. Zero means DefaultChangePollInterval.
	ChangePollInterval time.Duration

	// TaskStore keeps the tasks of the Tasks extension (tools registered
	// with ToolOptions.TaskSupport). Nil means an in-process store (the
	// one store/memory exports as TaskStore): fine for one process; behind
	// a load balancer or on serverless platforms every instance needs the
	// same shared store (store/dynamo), as a task is polled, updated and
	// cancelled through any instance.
	TaskStore TaskStore
	// TaskRunner decides where tasks run. Nil means the in-process runner:
	// a pool of TaskWorkers goroutines on the instance that created or
	// resumed the task.
	TaskRunner TaskRunner
	// TaskWorkers bounds the tasks the in-process runner runs at once.
	// Tasks beyond it wait in a queue (16 per worker, all callers
	// together) until a worker is free or their claim deadline
	// (TaskClaimTimeout) passes; a call that finds the queue full is
	// answered CodeLimitExceeded (reason task_workers_busy). Zero means
	// DefaultTaskWorkers.
	TaskWorkers int
	// TaskWorkersPerPrincipal bounds the workers one principal's tasks
	// hold at once (all anonymous callers count as one); its further
	// tasks wait their turn, so that one caller's long tasks cannot
	// take every worker. Freed workers go to the waiting principals in
	// turn. Zero means a quarter of TaskWorkers (at least 1).
	TaskWorkersPerPrincipal int
	// TaskTTL is a task's time to live from its creation (its ttlMs): the
	// store keeps it that long and then forgets it, whatever its status.
	// Zero means DefaultTaskTTL.
	TaskTTL time.Duration
	// TaskPollInterval is the pollIntervalMs suggested to clients, and how
	// often a run reads its task (for a cancellation through another
	// instance). Zero means DefaultTaskPollInterval.
	TaskPollInterval time.Duration
	// TaskLease is how long a run holds a task without a heartbeat; a
	// working task whose lease has passed is failed by the next request
	// that reads it. Zero means DefaultTaskLease.
	TaskLease time.Duration
	// TaskClaimTimeout is how long a working task no run has claimed yet
	// (just created, or resumed by tasks/update) waits for its runner: a
	// task queued behind a busy pool, or an asynchronous invocation that
	// Lambda holds back under throttling. Past it, the next reader fails
	// the task ("no runner took it"). It is separate from TaskLease, which
	// bounds the silence of a run that holds the task. Zero means
	// DefaultTaskClaimTimeout.
	TaskClaimTimeout time.Duration
	// MaxTasksPerPrincipal bounds the unexpired tasks (any status) of one
	// authenticated principal; a call that would create one more is
	// answered -32603 (reason too_many_tasks). Zero means
	// DefaultMaxTasksPerPrincipal; negative, no bound.
	MaxTasksPerPrincipal int
	// MaxAnonymousTasks bounds the unexpired tasks of all anonymous
	// callers together, likewise. Zero means DefaultMaxAnonymousTasks;
	// negative, no bound.
	MaxAnonymousTasks int
	// MaxTaskBytesPerPrincipal bounds the bytes of caller input
	// (arguments, capabilities, client information: TaskRecord.Charge)
	// the unexpired tasks of one authenticated principal hold together;
	// a call that would pass it is answered CodeLimitExceeded (reason
	// too_many_task_bytes), one larger than the whole bound -32602. Zero
	// means DefaultMaxTaskBytesPerPrincipal; negative, no bound.
	MaxTaskBytesPerPrincipal int64
	// MaxAnonymousTaskBytes bounds those of all anonymous callers
	// together, likewise. Zero means DefaultMaxAnonymousTaskBytes;
	// negative, no bound.
	MaxAnonymousTaskBytes int64
	// MaxTaskAnswerBytes bounds the answers (tasks/update
	// inputResponses) one task holds at once; an update past it is
	// refused with -32602 and changes nothing. Zero means
	// DefaultMaxTaskAnswerBytes.
	MaxTaskAnswerBytes int
	// MaxLocalTaskStoreBytes bounds the encoded records of the
	// in-process task store (used when TaskStore is nil): a call that
	// would create a task past it is answered CodeLimitExceeded (reason
	// task_store_full), whoever the caller. Zero means
	// DefaultMaxLocalTaskStoreBytes; negative, no bound.
	MaxLocalTaskStoreBytes int64
	// TaskShutdownGrace is how long Close lets the in-process runner's
	// tasks finish before it cancels them (a host's drain period). Zero
	// cancels them at once.
	TaskShutdownGrace time.Duration
	// MaxTaskResultBytes bounds the encoded result a task keeps; a larger
	// result fails the task (-32603, reason task_result_too_large). Zero
	// means DefaultMaxTaskResultBytes.
	MaxTaskResultBytes int
}

// Validate reports the first invalid option, for configuration built from
// operator input. NewServer panics on the same errors.
func (o *ServerOptions) Validate() error {
	if o == nil {
		return nil
	}
	if o.Mode < ModeAuto || o.Mode > ModeLegacy {
		return fmt.Errorf("core: invalid Mode %d", o.Mode)
	}
	if o.PageSize < 0 {
		return fmt.Errorf("core: negative PageSize %d", o.PageSize)
	}
	if o.MaxRequestBytes < 0 {
		return fmt.Errorf("core: negative MaxRequestBytes %d", o.MaxRequestBytes)
	}
	if o.Sessions < SessionsAuto || o.Sessions > SessionsStateless {
		return fmt.Errorf("core: invalid Sessions %d", o.Sessions)
	}
	if o.SessionIdleTimeout < 0 || o.BridgeTimeout < 0 {
		return fmt.Errorf("core: negative SessionIdleTimeout or BridgeTimeout")
	}
	if o.MaxInputRounds < 0 {
		return fmt.Errorf("core: negative MaxInputRounds %d", o.MaxInputRounds)
	}
	if o.StateTTL < 0 {
		return fmt.Errorf("core: negative StateTTL %v", o.StateTTL)
	}
	if sk, ok := o.Keys.(StaticKeys); ok {
		if err := sk.validate(); err != nil {
			return fmt.Errorf("core: Keys: %w", err)
		}
	}
	for m, h := range o.CacheHints {
		known := false
		for _, c := range cacheableMethods {
			known = known || c == m
		}
		if !known {
			return fmt.Errorf("core: CacheHints: %q is not a cacheable method", m)
		}
		if h.TTL < 0 {
			return fmt.Errorf("core: CacheHints[%q]: negative TTL %v", m, h.TTL)
		}
		if h.Scope != "" && h.Scope != CacheScopePrivate && h.Scope != CacheScopePublic {
			return fmt.Errorf("core: CacheHints[%q]: invalid scope %q", m, h.Scope)
		}
	}
	if o.TaskWorkersPerPrincipal < 0 || o.MaxTaskAnswerBytes < 0 {
		return fmt.Errorf("core: negative TaskWorkersPerPrincipal or MaxTaskAnswerBytes")
	}
	if o.ChangePollInterval < 0 {
		return fmt.Errorf("core: negative ChangePollInterval")
	}
	if o.TaskWorkers < 0 || o.TaskTTL < 0 || o.TaskPollInterval < 0 || o.TaskLease < 0 || o.TaskClaimTimeout < 0 || o.TaskShutdownGrace < 0 || o.MaxTaskResultBytes < 0 {
		return fmt.Errorf("core: negative TaskWorkers, TaskTTL, TaskPollInterval, TaskLease, TaskClaimTimeout, TaskShutdownGrace or MaxTaskResultBytes")
	}
	if (o.ListToolsHandler == nil) != (o.CallToolHandler == nil) {
		return fmt.Errorf("core: ListToolsHandler and CallToolHandler must be set together")
	}
	for i, origin := range o.AllowedOrigins {
		if err := checkAllowedOrigin(origin); err != nil {
			return fmt.Errorf("core: AllowedOrigins[%d] %q: %w", i, origin, err)
		}
		if origin == "*" && o.AllowCredentials {
			return fmt.Errorf("core: AllowCredentials with AllowedOrigins \"*\" would let every site act with the user's credentials: list the origins")
		}
	}
	if o.AllowCredentials && len(o.AllowedOrigins) == 0 {
		return fmt.Errorf("core: AllowCredentials needs AllowedOrigins to list the origins allowed to send credentials")
	}
	return nil
}

// Server is an MCP server: tools, resources, prompts and completions, served
// over Streamable HTTP by ServeHTTP. Build it with NewServer, register
// features, then serve it. A Server is safe for concurrent use; features may
// be added or removed while it serves, and clients listening for changes are
// notified.
type Server struct {
	impl Implementation
	opts ServerOptions
	log  *slog.Logger

	mu  sync.Mutex // serialises writers of reg
	reg atomic.Pointer[registry]

	hub    hub
	sealer *sealer
	store  SessionStore
	local  local

	decoded  decodedSessions
	capsMemo memo[*ClientCapabilities] // decoded request capabilities
	infoMemo memo[*Implementation]     // decoded plain clientInfo objects
	formMemo memo[[2]error]            // verdicts on form schemas

	// messages recycles the parsed messages of POSTed bodies: a message
	// is only used while it is served (see Server.servePost).
	messages sync.Pool // *rpcMessage
	// results recycles response buffers of results (Request.resultBuffer).
	results sync.Pool // *[]byte

	advMu    sync.Mutex
	advCache map[string]*serverTool // prepared advanced-mode tools
	// unlisted serves, in advanced mode, legacy calls to tools the list
	// handler does not return: no schemas, CallToolHandler decides.
	unlisted *serverTool
	hints    map[string]cacheWire
	infoRaw  json.RawMessage // {"io.modelcontextprotocol/serverInfo":{...}}
	implRaw  json.RawMessage // the Implementation
	closed   chan struct{}
	once     sync.Once
	// chain is the middleware around serveRound; nil when there is none.
	chain Handler
	// poolResults: no middleware of the user's sees results, so their
	// buffers can be recycled (Request.resultBuffer).
	poolResults bool
	// tk is the Tasks extension's machinery.
	tk taskEngine
	// serving is set by the first request: from then on changes are
	// published to ServerOptions.ChangeBus.
	serving atomic.Bool
	// filter is the per-caller view of the features (filter.go).
	filter filters
	// ext are the extensions the server advertises and their methods
	// (extension.go).
	ext extState
}

// registry is an immutable snapshot of the server's features. Writers copy
// it; readers load it without locks.
type registry struct {
	tools       map[string]*serverTool
	toolList    []*serverTool // sorted by name
	modernTools []*serverTool // toolList without session-only tools
	resources   map[string]*serverResource
	resList     []*serverResource // sorted by URI
	templates   []*serverTemplate // sorted by template
	prompts     map[string]*serverPrompt
	promptLst   []*serverPrompt // sorted by name
}

func (r *registry) clone() *registry {
	c := &registry{
		tools:     make(map[string]*serverTool, len(r.tools)+1),
		resources: make(map[string]*serverResource, len(r.resources)+1),
		prompts:   make(map[string]*serverPrompt, len(r.prompts)+1),
		templates: append([]*serverTemplate(nil), r.templates...),
	}
	for k, v := range r.tools {
		c.tools[k] = v
	}
	for k, v := range r.resources {
		c.resources[k] = v
	}
	for k, v := range r.prompts {
		c.prompts[k] = v
	}
	return c
}

func (r *registry) sortAll() {
	r.toolList = r.toolList[:0]
	for _, t := range r.tools {
		r.toolList = append(r.toolList, t)
	}
	sort.Slice(r.toolList, func(i, j int) bool { return r.toolList[i].tool.Name < r.toolList[j].tool.Name })
	r.modernTools = r.modernTools[:0]
	for _, t := range r.toolList {
		if !t.needsSession {
			r.modernTools = append(r.modernTools, t)
		}
	}
	r.resList = r.resList[:0]
	for _, x := range r.resources {
		r.resList = append(r.resList, x)
	}
	sort.Slice(r.resList, func(i, j int) bool { return r.resList[i].order < r.resList[j].order })
	r.promptLst = r.promptLst[:0]
	for _, p := range r.prompts {
		r.promptLst = append(r.promptLst, p)
	}
	sort.Slice(r.promptLst, func(i, j int) bool { return r.promptLst[i].prompt.Name < r.promptLst[j].prompt.Name })
}

type cacheWire struct {
	ttlMs int64
	scope CacheScope
}

// NewServer returns a server identified by impl (Name and Version are
// required). opts may be nil. NewServer panics if impl lacks a name or
// version or opts is invalid (see ServerOptions.Validate).
func NewServer(impl Implementation, opts *ServerOptions) *Server {
	if impl.Name == "" || impl.Version == "" {
		panic("core: NewServer: Implementation needs a Name and a Version")
	}
	if err := opts.Validate(); err != nil {
		panic(err.Error())
	}
	s := &Server{impl: impl, closed: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
		if opts.AllowedOrigins != nil {
			s.opts.AllowedOrigins = append([]string{}, opts.AllowedOrigins...) // an empty list stays non-nil
		}
		s.opts.AllowedHosts = append([]string(nil), opts.AllowedHosts...)
	}
	o := &s.opts
	setDefault(&o.PageSize, DefaultPageSize)
	setDefault(&o.MaxRequestBytes, DefaultMaxRequestBytes)
	setDefault(&o.StreamKeepAlive, DefaultStreamKeepAlive)
	setDefault(&o.StateTTL, DefaultStateTTL)
	setDefault(&o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	setDefault(&o.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal)
	setDefault(&o.MaxAnonymousSessions, DefaultMaxAnonymousSessions)
	setDefault(&o.BridgeTimeout, DefaultBridgeTimeout)
	setDefault(&o.MaxInputRounds, DefaultMaxInputRounds)
	s.advCache = map[string]*serverTool{}
	if o.CallToolHandler != nil {
		s.unlisted = &serverTool{tool: &Tool{}, handler: o.CallToolHandler}
	}
	s.store = o.SessionStore
	if s.store == nil {
		s.store = &MemorySessionStore{}
	}
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	s.initFilters()
	s.hints = make(map[string]cacheWire, len(cacheableMethods))
	for _, m := range cacheableMethods {
		h := o.CacheHints[m]
		scope := h.Scope
		if scope == "" || scope == CacheScopePublic && s.perCaller() && m != "server/discover" {
			scope = CacheScopePrivate
		}
		s.hints[m] = cacheWire{ttlMs: h.TTL.Milliseconds(), scope: scope}
	}
	s.implRaw = appendImplementation(nil, &impl)
	s.infoRaw = append(append(append([]byte(`{"`), MetaServerInfo...), `":`...), s.implRaw...)
	s.infoRaw = append(s.infoRaw, '}')
	s.reg.Store((&registry{}).clone())
	s.sealer = newSealer(o.Keys, o.StateTTL, s.log)
	s.initTasks()
	if o.ChangeBus != nil {
		s.hub.bus = newBusLink(s, o.ChangeBus, o.ChangePollInterval)
	}
	s.initExtensions()
	o.Middleware = append([]Middleware(nil), o.Middleware...)
	s.buildChain()
	return s
}

// Implementation returns the server's identity.
func (s *Server) Implementation() Implementation { return s.impl }

// Logger returns the logger the server logs to: ServerOptions.Logger, or
// slog.Default() as it was when NewServer ran. Adapters log to it when
// their own options name no logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// PerProcessKeys reports whether the server seals requestState with a
// random key of its own, because ServerOptions.Keys was nil. Such state
// opens only on this process: a retry of a multi round-trip request that
// reaches another instance, or this one after a restart, fails with
// "Invalid or expired requestState". The serverless adapters
// (adapters/lambda, adapters/gcf) log a warning at start when it is true.
func (s *Server) PerProcessKeys() bool { return s.sealer.perProcess }

// Close ends the server's long-lived streams (subscriptions/listen and the
// legacy GET streams) gracefully: listen streams get their closing result.
// It also stops the in-process runner: it starts no task afterwards (a
// call that would create one gets -32603), lets the runs in flight finish
// for ServerOptions.TaskShutdownGrace, then cancels the rest (they end
// failed, or cancelled when the client asked for it) and waits for their
// handlers to return.
// The server keeps answering ordinary requests.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closed)
		if s.tk.local != nil {
			s.tk.local.close(s.opts.TaskShutdownGrace)
		}
	})
	return nil
}

// MaxRequestBytes returns the largest request body the server reads
// (ServerOptions.MaxRequestBytes with its default): an adapter that must
// buffer a body before handing it over reads at most one byte more.
func (s *Server) MaxRequestBytes() int64 { return s.opts.MaxRequestBytes }

// update applies fn to a copy of the registry and publishes it.
func (s *Server) update(fn func(*registry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reg.Load().clone()
	fn(r)
	r.sortAll()
	s.reg.Store(r)
}

// hasTools reports whether the server serves tools.
func (s *Server) hasTools(r *registry) bool {
	return len(r.tools) > 0 || s.opts.CallToolHandler != nil
}

func (s *Server) hasResources(r *registry) bool {
	return len(r.resources) > 0 || len(r.templates) > 0
}

func (s *Server) hasPrompts(r *registry) bool { return len(r.prompts) > 0 }

// serverCapabilities returns what the server serves, with list-change
// notifications when notify is set (each era decides when a client can
// receive them: era.capabilities).
func (s *Server) serverCapabilities(notify bool) *ServerCapabilities {
	r := s.reg.Load()
	c := &ServerCapabilities{}
	if s.hasTools(r) {
		c.Tools = &ToolCapabilities{ListChanged: notify}
	}
	if s.hasResources(r) {
		c.Resources = &ResourceCapabilities{ListChanged: notify, Subscribe: notify}
	}
	if s.hasPrompts(r) {
		c.Prompts = &PromptCapabilities{ListChanged: notify}
	}
	if s.opts.CompletionHandler != nil {
		c.Completions = &struct{}{}
	}
	c.Logging = &struct{}{}
	return c
}

// supportedVersions lists the revisions the server serves, newest first.
func (s *Server) supportedVersions() []string {
	switch s.opts.Mode {
	case ModeModern:
		return modernVersions
	case ModeLegacy:
		return legacyVersions
	}
	return append(append([]string(nil), modernVersions...), legacyVersions...)
}

func (s *Server) servesModern() bool { return s.opts.Mode != ModeLegacy }

func (s *Server) servesLegacy() bool { return s.opts.Mode != ModeModern }

// setDefault sets *p to def when it holds its zero value.
func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// unregister deletes keys from the registry map that m selects and notifies
// listeners of kind.
func unregister[V any](s *Server, kind changeKind, keys []string, m func(*registry) map[string]V) {
	s.update(func(r *registry) {
		mm := m(r)
		for _, k := range keys {
			delete(mm, k)
		}
	})
	s.changed(kind, "")
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

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
