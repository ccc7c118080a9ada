// Package client is an MCP client for Streamable HTTP that speaks both eras
// of the protocol: the stateless 2026-07-28 revision (per-request _meta,
// server/discover, multi round-trip requests, cache hints, x-mcp-header) and
// the initialize-based revisions 2025-11-25, 2025-06-18 and 2025-03-26
// (Mcp-Session-Id sessions, server requests answered by POST, SSE
// resumption).
//
// A *Client holds the configuration (Options), the handlers, the token
// source, the result cache and the era of each endpoint it probed; its
// Connect returns a *Conn, one connection to one endpoint. Both are safe
// for concurrent use:
//
//	cl := client.New(&client.Options{TokenSource: src})
//	c, err := cl.Connect(ctx, "https://example.com/mcp")
//	if err != nil { ... }
//	defer c.Close()
//	tools, err := c.ListTools(ctx)
//	res, err := c.CallTool(ctx, "search", map[string]any{"q": "mcp"})
//
// The package-level Connect, Discover, Adopt and InitializeLegacy use a
// Client of their own each time (client.Connect(ctx, url, opts) is
// client.New(opts).Connect(ctx, url)); the package holds no state.
//
// # Eras
//
// In ModeAuto (the default) Connect sends server/discover and picks the era
// from the answer: a modern version the client speaks → 2026-07-28; only
// legacy versions → initialize; -32022 → one retry with a version from
// data.supported; 400/404/405 without a recognised JSON-RPC error, or
// -32601 → initialize. 401 and 403 are never taken as era evidence. The
// Client remembers the era found per endpoint for its later Connects (at
// most MaxEras endpoints), and forgets it when it fails. ModeModern and
// ModeLegacy skip the probe. A Conn's era is chosen once, when it
// connects, and never changes.
//
// # Input rounds
//
// CallTool, GetPrompt and ReadResource answer input_required results with the
// handlers of Options (Elicitation, Sampling, Roots) and retry with the
// original params plus inputResponses and the requestState byte for byte,
// up to Options.MaxRounds. CallToolOnce stops after one round and returns a
// Continuation to answer later. In legacy sessions the same handlers answer
// the server's elicitation/create, sampling/createMessage and roots/list
// requests, each one a round of the same bound: the request after the last
// round cancels the call with a *MaxRoundsError.
//
// # Tasks
//
// Options.Tasks declares the Tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663) in every 2026-07-28 request, and a server may then answer a
// tools/call with a task instead of its result. CallTool (and
// CallToolOnce) wait for the task: they poll tasks/get every
// pollIntervalMs the server suggests (at least MinTaskPollInterval, at most
// MaxTaskPollInterval, DefaultTaskPollInterval when it suggests none, with
// a last look shortly before ctx's deadline), answer the task's
// inputRequests with the handlers of Options (each key once, however many
// polls list it; at most Options.MaxRounds tasks/update and 64 inputs per
// poll) through tasks/update, and return the outcome: completed is the
// CallToolResult (IsError included), failed the task's JSON-RPC error as an
// *mcp.Error, cancelled an error matching ErrTaskCancelled. When ctx ends, or
// the wait fails before the task ends, they cancel the task with
// tasks/cancel, best effort, on a context of its own bounded by
// TaskCancelTimeout. Every task request carries Mcp-Name with the task id
// and the call's credential and headers, and has the bounds of any request
// (RequestTimeout, MaxResponseBytes). CallOptions.TaskStatus follows the task's
// status changes.
//
// CallToolTask returns the TaskHandle at once instead; its ID can be
// persisted, and Conn.Task(id) resumes the task later, from another process
// too: Get, Update and Cancel send one request each, and Wait polls as
// CallTool does but leaves the task running when ctx ends. The client
// polls; it does not subscribe to notifications/tasks. Legacy connections
// ignore Options.Tasks.
//
// # x-mcp-header
//
// In 2026-07-28 CallTool mirrors the arguments a tool's inputSchema names
// with x-mcp-header into Mcp-Param-* headers. Declarations are learnt from
// tools/list; a call to a tool not yet listed reads the list first (through
// the cache, stopping at the tool's page, at most 32 pages), and a tool the
// list does not name is called without them. A -32020 answer refreshes the
// list and sends the call once more.
//
// # Legacy sessions
//
// A legacy Conn initializes a session (Mcp-Session-Id) and ends it on
// Close. A 404 to a request that carried the session id, whatever its
// body, means the server ended the session: the client initializes a new
// one and sends the request once more (the server did not process it).
// Options.NoInitialize reaches a legacy server without any session (every
// call may carry a different user's token); Options.SessionID adopts an
// existing session (Conn.SessionID of another Conn) without initialize.
//
// # Authorization
//
// Options.TokenSource supplies the bearer token. A TokenSource that also
// implements Challenger (package client/oauth) is asked to authorize on a
// 401, or a 403 with error="insufficient_scope", and the request is sent
// again, at most three times per operation. CallOptions.Token, or an
// Authorization header in CallOptions.Header, is the credential of one
// call: it never triggers a challenge, bypasses the cache, and on legacy
// servers such calls run in a session per credential.
//
// # Cache
//
// Complete results of server/discover, the list methods and resources/read
// are cached per their ttlMs and cacheScope (2026-07-28
// server/utilities/caching), per endpoint, in a cache the Conns of a
// Client share, bounded by Options.CacheEntries (LRU) and Options.MaxTTL.
// "public" results are shared; the others are private to the credential
// source that got them: the Client's TokenSource (every token it returns,
// so a token renewed on expiry keeps the cache), the Authorization of
// Options.Header, or no credential. A successful challenge drops the
// private entries (a new authorization). Calls with a credential of their
// own neither read nor store entries. CallOptions.Cache chooses per call.
//
// # Middleware
//
// Options.Middleware wraps the sending of every request, in both eras, the
// first listed outermost, as core's ServerOptions.Middleware wraps a
// server's handling. A Middleware sees the Call (method, target, endpoint,
// version and era, legacy session, round of a multi round-trip request,
// the _meta entries and HTTP headers about to be sent, which it may
// change: W3C trace context, say) and its Outcome (the result, isError,
// input_required) or error (*mcp.Error with its code); it may refuse the
// request by returning an error without calling next, and nothing is sent.
// Each 2026-07-28 input round is a Call of its own; retries at the
// transport level (a challenge's new token, a broken stream sent again, a
// legacy session renewed after 404) stay inside one Call.
//
// # Forwarding
//
// Conn.Forward relays a 2026-07-28 request another client built (the
// downstream side of a proxy or a stdio bridge, such as mcpfn stdio) as
// it is: it adds the HTTP headers the body implies, authorizes it, and
// returns the stream's notifications and the result as received, without
// running input rounds or using the cache.
//
// # Concurrency
//
// A Client and its Conns are safe for concurrent use. A Client's
// configuration is fixed at New; its cache and era memory are shared by its
// Conns under locks. A Conn may run any number of calls, Listens and a
// Close at once; calls after Close fail with ErrClosed. The handlers of
// Options are called concurrently, from the goroutines of every Conn's
// calls and (legacy) GET streams; a Listen's fn is never called
// concurrently with itself. A TokenSource is called concurrently.
//
// # Types
//
// Requests and results are the wire types of package mcp (mcp.Tool,
// mcp.CallToolResult, mcp.ListPromptsResult, ...), decoded with their raw
// parts kept raw: tool schemas, structuredContent and input request params
// are json.RawMessage values as received. CallOptions.RawResult hands out a whole
// result as received; ToolsPage keeps each tool's entry. Cursors follow
// the mcp convention: nil is the first page in a request and the last page
// in a result, and "" is a cursor like any other.
//
// # Errors
//
// A JSON-RPC error is an *mcp.Error, which records the request's method
// and the response's HTTP status (Method, ResponseStatus); errors.Is
// matches -32020, -32021 and -32022 with mcp.ErrHeaderMismatch,
// mcp.ErrMissingCapability and mcp.ErrUnsupportedVersion, whose data
// mcp.Error.RequiredCapabilities, Supported and Requested read. HTTP
// failures without a JSON-RPC body are *HTTPError. ErrStreamBroken,
// ErrProtocol, ErrMaxRounds, ErrUnauthorized, ErrTimeout, ErrClosed and
// ErrTaskCancelled are matched with errors.Is. A request the server
// refused for now (HTTP 429 or 503) is sent again after the wait its
// Retry-After asks for, Options.MaxRetries times at most; then, or at once
// when the wait would be longer than Options.MaxRetryWait, it fails with a
// *RetryLaterError (ErrRetryLater), whose RetryAfter and At say when to
// try again and which wraps the last response's error. A tool's own
// failure is an mcp.CallToolResult with IsError set, not an error (in a
// task too: the task completes with it).
package client
