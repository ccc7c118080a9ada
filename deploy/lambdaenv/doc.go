// Package lambdaenv runs an MCP server as an AWS Lambda function configured
// by the environment that the mcp-lambda Terraform module
// (infra/terraform/modules/mcp-lambda) gives the function: a shared session
// store, shared signing keys, authorization, allowed origins, logs and
// response streaming. A whole function is
//
//	func main() {
//		lambdaenv.Start(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
//			core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//		})
//	}
//
// built with `mcpfn package lambda` (or GOOS=linux GOARCH=arm64
// CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap .) for the
// provided.al2023 runtime. [Load] returns the same configuration as the
// options of core, adapters/lambda, store/dynamo, store/secretsmanager and
// auth, for programs that wire the server themselves. [StartWith] takes
// [Options] that instrument the function (see Telemetry below).
//
// Library packages of mcpfn never read the environment; this package is the
// one place that does, by design: it is the bridge between a deployment's
// configuration and the options of the libraries (as OpenTelemetry's
// autoexport is). It reads the variables on every call of [Load], and keeps
// nothing between calls.
//
// # Variables
//
// Every MCPFN_ variable is optional; unset (or empty) means its default.
// "Terraform" means the mcp-lambda module sets it; "Lambda" means the Lambda
// runtime does.
//
//	MCPFN_DYNAMODB_TABLE   Name of the DynamoDB table of the sessions of legacy
//	                       (2025-*) clients, shared by every instance
//	                       (store/dynamo; the table's key and TTL attributes are
//	                       those of dynamo.CreateTable). Default: sessions live
//	                       in each instance, and a legacy client whose request
//	                       reaches another instance must start a new session.
//	                       The same table holds the tasks of the Tasks
//	                       extension (dynamo.TaskStore, under their own key
//	                       prefix); without it tasks live in each instance,
//	                       and Start refuses task tools on Lambda. It also
//	                       carries change notifications between instances
//	                       (dynamo.ChangeBus): a stream on one instance hears
//	                       of a change made on another.
//	                       Set by: Terraform (the table it creates).
//	MCPFN_TASK_RUNNER      Where the tasks of the Tasks extension
//	                       (io.modelcontextprotocol/tasks) run: lambda in an
//	                       asynchronous invocation of this function
//	                       (FunctionName AWS_LAMBDA_FUNCTION_NAME), so that a
//	                       task outlives the request that created it; it needs
//	                       MCPFN_DYNAMODB_TABLE (the invocation reads the task
//	                       from there) and lambda:InvokeFunction on the
//	                       function. inprocess in the process that created or
//	                       resumed the task: right for a process that keeps
//	                       running after its response (a net/http server), not
//	                       on Lambda, which freezes the invocation once its
//	                       response is sent. none: the deployment runs no
//	                       tasks. Default: lambda on Lambda
//	                       (AWS_LAMBDA_FUNCTION_NAME set) with
//	                       MCPFN_DYNAMODB_TABLE, inprocess otherwise. [Start]
//	                       refuses a server with task tools where they cannot
//	                       run safely: on Lambda with inprocess or without the
//	                       table, anywhere with none (see Tasks below). Set by:
//	                       Terraform (lambda with var.tasks, the default, with
//	                       the grant; none with tasks = false).
//	MCPFN_TASK_CLAIM_TIMEOUT
//	                       How long a working task no run has claimed waits
//	                       for its runner (core.ServerOptions.TaskClaimTimeout),
//	                       apart from the lease of a running task: an
//	                       asynchronous invocation that Lambda holds back
//	                       under throttling (reserved concurrency) runs late,
//	                       not never. Whole seconds (300) or a Go duration
//	                       (5m), positive. Default: core.DefaultTaskClaimTimeout
//	                       (5 minutes). Set by: Terraform
//	                       (var.task_claim_timeout).
//	MCPFN_KEYS_SECRET_ID   Secrets Manager secret (name or ARN) holding the HMAC
//	                       keys that seal the requestState of multi round-trip
//	                       requests, shared by every instance and rotated with
//	                       the secret's versions (store/secretsmanager).
//	                       Default: see MCPFN_STATE_KEY. Set by: Terraform (the
//	                       secret it creates, with its rotation).
//	MCPFN_STATE_KEY        Fixed signing keys instead: standard base64 of at
//	                       least 32 random bytes (openssl rand -base64 32), or
//	                       several, comma-separated, the first sealing and all
//	                       opening. For tests and local development: it sits in
//	                       the function's configuration. At most one of
//	                       the two key variables may be set. Default (neither
//	                       set): each instance seals with a random key of its
//	                       own, so a retry that reaches another instance fails
//	                       with "Invalid or expired requestState"; the adapter
//	                       logs a warning at start saying so. Set by: you.
//	MCPFN_ALLOWED_ORIGINS  Comma-separated browser origins accepted
//	                       (https://app.example.com,https://b.example:8443), or
//	                       "*"; see core.ServerOptions.AllowedOrigins. Default:
//	                       same-origin browser requests only (clients that send
//	                       no Origin header are unaffected). Set by: Terraform
//	                       (var.allowed_origins).
//	MCPFN_AUTH_RESOURCE    The MCP endpoint's URL as clients use it
//	                       (https://.../mcp). Set, the server is an OAuth 2.1
//	                       protected resource (package auth) accepting the JWT
//	                       access tokens of MCPFN_AUTH_ISSUER. Default: no
//	                       authorization by the server. Set by: Terraform
//	                       (modules/mcp-lambda's auth variable sets every
//	                       MCPFN_AUTH_* variable), or you.
//	MCPFN_AUTH_ISSUER      The authorization server's issuer URL; required with
//	                       MCPFN_AUTH_RESOURCE.
//	MCPFN_AUTH_JWKS_URL    Its JWKS URL. Default: from its metadata.
//	MCPFN_AUTH_SCOPES      Space-separated scopes every request needs. Default:
//	                       none.
//	MCPFN_AUTH_METADATA_URL, MCPFN_AUTH_METADATA_PATH
//	                       Where the protected resource metadata is served
//	                       (auth.Options.MetadataURL, MetadataPath), behind a
//	                       stage prefix. Default: derived from the resource.
//	MCPFN_LOG_LEVEL        debug, info, warn or error. Default: info. Set by:
//	                       Terraform (var.log_level).
//	MCPFN_STREAMING        1 (or true) streams the responses of Function URL and
//	                       REST API events (lambda.Options.Streaming); the
//	                       integration must match: a Function URL with invoke
//	                       mode RESPONSE_STREAM, a REST API
//	                       response-streaming-invocations integration. 0, false
//	                       or unset: buffered. Set by: Terraform ("1", with a
//	                       RESPONSE_STREAM Function URL).
//	AWS_LAMBDA_LOG_FORMAT  JSON makes the logs JSON lines; otherwise they are
//	                       text lines. Logs go to stderr (CloudWatch Logs). Set
//	                       by: Lambda (the function's log format).
//	AWS_LAMBDA_FUNCTION_NAME
//	                       The function's name: the Lambda runner invokes it,
//	                       and its presence means the process runs on Lambda
//	                       (the default of MCPFN_TASK_RUNNER, and the fields
//	                       of Logs below). Set by: Lambda.
//	AWS_LAMBDA_FUNCTION_MEMORY_SIZE
//	                       The function's memory in MB, logged as
//	                       function_memory_size. Set by: Lambda.
//	AWS_LAMBDA_INITIALIZATION_TYPE
//	                       provisioned-concurrency: the sandbox was started
//	                       ahead of its invocations, and cold_start is never
//	                       true. Set by: Lambda.
//	POWERTOOLS_SERVICE_NAME, OTEL_SERVICE_NAME
//	                       The service field of the logs on Lambda, the first
//	                       set. Default: the function's name. Set by: you.
//	AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
//	                       The region and the execution role's credentials,
//	                       read by [LambdaAWSConfig] when a table or a secret is
//	                       named. Set by: Lambda.
//	AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SECRETS_MANAGER,
//	AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL
//	                       Endpoint overrides of the services (DynamoDB Local,
//	                       dynalite, LocalStack, a loopback Invoke API), the
//	                       service's own first. Default: the AWS endpoints. Set by: you, for
//	                       tests.
//
// A variable that is malformed, or set without the one it needs, makes
// [Load] (and so [Start]) fail with an error that names it.
//
// # Logs
//
// The logger (Config.Server.Logger, and Config.Lambda.Logger) writes to
// stderr at MCPFN_LOG_LEVEL, as JSON lines with Lambda's field names
// (timestamp, level, message) when AWS_LAMBDA_LOG_FORMAT=JSON, text lines
// otherwise. A record logged with an invocation's context (every record of
// a request: core's request record, a middleware's, a handler's that passes
// ctx) has the invocation's requestId, as Lambda's own records do. On
// Lambda (AWS_LAMBDA_FUNCTION_NAME set) records also have the fields
// Powertools for AWS Lambda logs, so that its queries read them:
//
//	service               POWERTOOLS_SERVICE_NAME, OTEL_SERVICE_NAME or the function's name
//	function_name         AWS_LAMBDA_FUNCTION_NAME
//	function_memory_size  AWS_LAMBDA_FUNCTION_MEMORY_SIZE (MB)
//	cold_start            true in the first invocation of the sandbox, false after (lambda.ColdStart);
//	                      always false with provisioned concurrency (AWS_LAMBDA_INITIALIZATION_TYPE)
//	function_request_id   the invocation's request id (as requestId)
//	function_arn          the ARN the invocation named
//	xray_trace_id         the Root of the invocation's X-Ray trace header (1-5759e988-bd862e3fe1be46a994272793)
//
// and every duration is a number of milliseconds under its key with _ms
// appended: the request record's duration is duration_ms (1.234), where
// slog writes integer nanoseconds in JSON and Go duration strings in text,
// which CloudWatch Logs Insights does not compute with. The last four are
// those of records logged with an invocation's context. Off Lambda, records
// keep requestId and their durations as slog writes them, as other
// platforms' logs do.
//
// # Telemetry
//
// [StartWith] instruments the function with [Options]: Middleware wraps
// every request (otel.Middleware of module github.com/mcpfn/mcpfn/otel
// makes its span and its mcp.server.operation.duration point), Flush lists
// what adapters/lambda flushes at the end of every invocation, and
// Configure changes anything else. Lambda freezes the sandbox once an
// invocation is over and may end it frozen, so an OpenTelemetry SDK's
// batches must leave before: the flush runs once the response has been
// sent (a streamed one to its end) and before the function asks for the
// next invocation, which is when Lambda freezes it; the client does not
// wait for it, and it is bounded by FlushTimeout (2 seconds by default)
// and the invocation's deadline. The SDK's *trace.TracerProvider and
// *metric.MeterProvider are lambda.Flushers; the kit links no
// OpenTelemetry:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	o := otel.Options{TracerProvider: tp}
//	lambdaenv.StartWith(impl, setup, &lambdaenv.Options{
//		Middleware: []core.Middleware{otel.Middleware(o)},
//		Flush:      []lambda.Flusher{tp},
//	})
//
// # Many instances
//
// Lambda runs as many instances of a function as there are concurrent
// requests. What a request needs from an earlier one must be shared: the
// legacy sessions and the tasks (MCPFN_DYNAMODB_TABLE) and the keys of
// requestState (MCPFN_KEYS_SECRET_ID). Without shared keys, adapters/lambda logs one
// warning at start naming MCPFN_KEYS_SECRET_ID, and an instance that
// receives a requestState sealed by another logs, at level warn (at most
// one a minute), that the state names a key it does not have; the client
// gets -32602 "Invalid or expired requestState" either way.
//
// # Tasks
//
// A task must outlive the request that created it, and be readable from
// every instance once its CreateTaskResult is sent (tasks.md §Task
// Creation). On Lambda the invocation that created it is frozen once its
// response is sent, so by default the kit runs each task in an
// asynchronous invocation of the function (MCPFN_TASK_RUNNER=lambda) and
// keeps it in the table (MCPFN_DYNAMODB_TABLE), where any instance reads
// it. [Start] checks the server once setup has added the tools: a server
// with task tools (ToolOptions.TaskSupport) on Lambda without the table, or
// with MCPFN_TASK_RUNNER=inprocess, and a server with task tools under
// MCPFN_TASK_RUNNER=none, end the function at init with an error naming
// the fix, rather than serve tasks that fail once their lease passes or
// that another instance does not know. A server without task tools starts
// whatever these variables say. A program that wires the server itself
// from [Load] gets the same configuration; adapters/lambda logs an error
// at init for a server whose tasks would run in process or live in the
// instance's memory.
package lambdaenv
