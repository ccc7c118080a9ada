// Package core is the protocol engine of mcpfn: an MCP (Model Context
// Protocol) server that serves the stateless 2026-07-28 revision and the
// initialize-based revisions 2025-11-25, 2025-06-18 and 2025-03-26 on one
// Streamable HTTP endpoint, built to run as a serverless or edge function.
//
// The protocol's wire types (tools, content, results, capabilities, input
// requests, error codes and the one error type) are those of package
// github.com/mcpfn/mcpfn/mcp, which the client shares; core aliases them
// ([Tool] is mcp.Tool, [Error] is mcp.Error), so server code names them
// either way. Beyond mcp, core imports only the standard library and three
// libraries: github.com/invopop/jsonschema to derive schemas from Go types,
// github.com/google/jsonschema-go to validate arguments and results (JSON
// Schema 2020-12 and draft-07), and github.com/go-json-experiment/json to
// decode them with encoding/json/v2 semantics. Platform adapters
// (adapters/nethttp, adapters/lambda, adapters/gcf) and stores
// (store/memory, store/dynamo, store/secretsmanager) depend on it, never the
// reverse.
//
// # Quick start
//
//	type AddArgs struct {
//		Left  int `json:"left" jsonschema:"description=The first addend"`
//		Right int `json:"right" jsonschema:"description=The second addend"`
//	}
//
//	func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
//		return in.Left + in.Right, nil
//	}
//
//	func main() {
//		srv := core.NewServer(core.Implementation{Name: "calculator", Version: "2.0.0"}, nil)
//		core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		defer stop()
//		if err := nethttp.Serve(ctx, "127.0.0.1:8080", srv, nil); err != nil { // serves /mcp
//			log.Fatal(err)
//		}
//	}
//
// (examples/calculator). nethttp.Serve sets the timeouts an exposed
// http.Server needs; a bare http.ListenAndServe has none.
//
// [Server] implements [net/http.Handler]: every status code, header and
// response body the transport needs is decided here, so the same server
// behaves identically behind net/http, AWS Lambda and Cloud Functions.
//
// # Tools
//
// [AddTool] registers a typed handler, a [ToolFunc] (the shape of go-sdk's
// ToolHandlerFor without its *CallToolResult return). The input schema is
// derived from the argument type once, at registration, arguments are
// validated against it before the handler runs, and the output schema comes
// from the result type (see [OutputPolicy], set with [ToolOptions], the
// optional last argument of [AddTool]): a result is sent as
// structuredContent only where its outputSchema is advertised, so a result
// of an interface type such as any is text only unless [Tool].OutputSchema
// supplies a schema. A result whose structuredContent does not conform to
// its outputSchema is answered -32603 (see [AddTool]).
//
// Tools and forms ([NewForm]) read one tag dialect, the `jsonschema` struct
// tag: key=value items as invopop/jsonschema reads them
// (`jsonschema:"description=The city,enum=metric,enum=imperial"`, a comma in
// a value escaped as \,), or a bare description as the official Go SDK
// writes it (`jsonschema:"the city, in English"`). A tag that starts as a
// description but has a later item that reads as a keyword is a registration
// error, and so are a key or value the dialect does not read (the panic
// names the field and the fix) and a recursive type (derived schemas are
// inline): write its schema by hand in [Tool].InputSchema. Runtime values
// (context, request _meta, HTTP headers, the principal, the session, the
// answers of a multi round-trip request) travel in [CallToolRequest] and
// never appear in schemas.
//
// A handler's error decides the outcome: a [ToolError] is a result with
// isError the model can act on; an [*Error] (see [InvalidParamsError],
// [InternalError]) is that JSON-RPC error; [InputRequired] asks the client for
// input; anything else (a plain error), or a panic, is logged and answered
// -32603 with a generic message, so that no internal detail reaches the
// client. Set [ServerOptions].ToolErrorResults to report a plain error as an
// isError result with its message instead, as the official Go SDK does (a
// panic stays -32603).
//
// A tool argument can be mirrored into an Mcp-Param-{Name} header with the
// struct tag `jsonschema_extras:"x-mcp-header=Name"`; the server checks the
// header against the argument on every 2026-07-28 call.
//
// ServerOptions.ListToolsHandler and CallToolHandler replace typed tools
// ("advanced mode") for servers that compute their tools at run time.
//
// # Multi round-trip requests
//
// A tool, prompt or resource handler that needs the user's or the client's
// model's input returns [InputRequired] with [InputRequests] built by
// [ElicitForm], [ElicitURL], [NewForm], [Sample] or [ListRoots], and an
// optional state string. Sampling and roots are deprecated in 2026-07-28
// (SEP-2577) and still served, to clients that declare the capability. The client answers and retries; the handler runs
// again from the top and reads the answers through [Request.Input]: [Answer]
// (or [Form.Answer]) tells a form that has no answer yet, so the handler
// asks, from one the user accepted, declined or cancelled; a decline or a
// cancel ends the call, since asking again would show the user the same
// question (servers MUST handle both, 2026-07-28 client/elicitation). The state the handler returned comes back verified: the
// server seals it with HMAC-SHA256, bound to the method, the tool, prompt or
// resource, the arguments (key order does not matter), the caller's
// principal, and an expiry renewed each round (ServerOptions.StateTTL).
// Sealed state is signed, not encrypted: the client can read it, and can
// replay it until it expires. Keep secrets out of it, and enforce at-most-once
// effects in the handler if they matter. Keys come from a [KeyProvider]
// (ServerOptions.Keys); without one the server generates a random key at
// start, which does not survive a restart or reach other replicas.
//
// The same handler serves legacy clients: on a legacy call with a session and
// an SSE stream, the server sends the input requests as server-to-client
// requests (elicitation/create, sampling/createMessage, roots/list), waits
// for the answers and runs the handler again with them.
//
// # Tasks
//
// A tool registered with ToolOptions.TaskSupport (TaskOptional or
// TaskRequired) may run as a task of the Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) for 2026-07-28 calls that
// declare it: the call is answered at once with a task handle, and the
// client polls tasks/get, answers the task's input requests with
// tasks/update and may tasks/cancel, through any instance. The handler is
// the same re-entrant function: inside a task, InputRequired moves the task
// to input_required, and the answers run it again from the top;
// NotifyProgress's message becomes the task's statusMessage; its context
// is cancelled when the task is. Tasks live in a [TaskStore] (in-process by
// default, store/dynamo for many instances) and run where the
// [TaskRunner] puts them (in-process goroutines by default; every runner
// ends in [Server.RunTask]). Tasks are bound to the principal that created
// them, bounded per principal, and expire with their TTL.
//
//	core.AddTool(srv, &core.Tool{Name: "report"}, buildReport,
//		&core.ToolOptions{TaskSupport: core.TaskOptional})
//
// # Protocol eras and sessions
//
// ServerOptions.Mode selects the eras served ([ModeAuto] by default: each
// request is recognised by its shape; a request carrying 2026-07-28 _meta is
// modern whatever its method). Legacy sessions (see [SessionMode]) live in a
// [SessionStore]: in-process by default, store/dynamo for many instances.
// Sessions are bound to the principal that created it, expire when idle, and
// are bounded per principal with least-recently-used eviction.
//
// # Concurrency
//
// A Server is safe for concurrent use. Tools, resources and prompts may be
// added or removed while it serves; clients listening for list changes are
// notified.
//
// # Middleware
//
// ServerOptions.Middleware wraps every request of both eras, on every
// adapter, after authentication and before the method's handler (see
// [Middleware]): the first listed is the outermost. A middleware sees the
// [Call] (method, target, era and protocol version, principal, legacy
// session, the raw _meta and the HTTP headers, the JSON-RPC id, the round,
// and whether the server serves the method and has the target:
// [Call.Served], [Call.TargetFound]) and the [Outcome] (result, isError,
// input_required, cancelled) or the error, and may refuse the request with
// an error: an [*Error] is sent as that JSON-RPC error, any other error as a
// -32603 whose text is logged, never sent. A tracing middleware puts its
// span in the context next runs in, so the handler's context carries it;
// it names spans after the method and target only when the server serves
// and has them, since other names are the client's choice.
//
//	srv := core.NewServer(impl, &core.ServerOptions{Middleware: []core.Middleware{
//		func(next core.Handler) core.Handler {
//			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
//				if c.Method == "tools/call" && c.Principal == nil {
//					return nil, core.NewError(core.CodeInvalidRequest, "sign in first")
//				}
//				return next(ctx, c)
//			}
//		},
//	}})
//
// A request runs one round, except a legacy call whose handler asks for
// input over the bridge: each run of the handler is a round, and the chain
// is called again for it with Call.Round one higher. In 2026-07-28 asking for
// input ends the request (input_required) and the client's retry is a new
// request, whose Round counts the rounds before it.
//
// # Logging
//
// The server logs through ServerOptions.Logger (log/slog); nil means
// slog.Default() as it is when NewServer runs. Besides warnings and the
// causes of -32603 errors (at error), it logs one request record per round
// of every request, with the message "mcp request", at
// ServerOptions.RequestLogLevel (info unless set; DisableRequestLog turns it
// off). Its attributes ([LogRequests]; an attribute without a value is left
// out):
//
//	method     the JSON-RPC method, e.g. "tools/call"
//	target     the tool or prompt name, resource URI or completion ref
//	era        "modern" (2026-07-28) or "legacy"
//	version    the protocol revision, e.g. "2026-07-28"
//	status     ok, isError, input_required, cancelled or error
//	code       the JSON-RPC error code, with status error
//	round      the input rounds before this one, when not 0
//	duration   the time the round took
//	session    the first 16 hex digits of the SHA-256 of the legacy session id
//	principal  the authenticated subject
//	client_id  the authenticated OAuth client
//
// The record never holds tokens, headers, arguments, results, error messages
// or the session id itself.
//
// Every string a client chooses is bounded before it is logged ([Truncate]):
// names (the method, a header value, the principal) to [LogNameBytes], the
// target to [LogURIBytes] and error texts to [LogErrorBytes], cut at a rune
// boundary with a marker naming the original length, so that one request
// cannot write a line of megabytes. Short strings are logged as they are,
// at no cost.
//
// A handler can also send log messages to the client with [Request.Log]
// (notifications/message, at the level the client asked for); the client
// logging feature is deprecated in 2026-07-28 (SEP-2577) and still served.
//
// The specification: https://modelcontextprotocol.io/specification/2026-07-28
// and https://modelcontextprotocol.io/specification/2025-11-25.
package core
