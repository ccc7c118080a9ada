// Package gcfenv runs an MCP server as a Google Cloud Function (2nd gen,
// HTTP trigger) configured by the environment that the mcp-gcf Terraform
// module (infra/terraform/modules/mcp-gcf) gives the function: the signing
// key (from Secret Manager), authorization, allowed origins and logs. A
// whole function is one file of a package at the root of its module:
//
//	func init() {
//		gcfenv.Start("MCP", core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
//			core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//		})
//	}
//
// deployed with gcloud functions deploy NAME --gen2 --runtime=go126
// --trigger-http --entry-point=MCP --source=. (or the Terraform module).
// [Load] returns the same configuration as [core.ServerOptions], for
// programs that wire the server themselves; [Handler] returns the HTTP
// function without registering it. [StartWith] and [HandlerWith] take
// [Options] that instrument the server (see Telemetry below).
//
// Library packages of mcpfn never read the environment; this package is the
// one place that does, by design: it is the bridge between a deployment's
// configuration and the options of the libraries (as OpenTelemetry's
// autoexport is). It reads the variables on every call of [Load], and keeps
// nothing between calls. It depends on adapters/gcf and auth only: no AWS
// SDK reaches a Cloud Function.
//
// # Variables
//
// Every variable is optional; unset (or empty) means its default.
// "Terraform" means the mcp-gcf module sets it.
//
//	MCPFN_STATE_KEY        The key that seals the requestState of multi
//	                       round-trip requests, shared by every instance:
//	                       standard base64 of at least 32 random bytes; or
//	                       several, comma-separated, the first sealing and all
//	                       opening (see Rotation below). Default:
//	                       each instance seals with a random key of its own, so
//	                       a retry that reaches another instance fails with
//	                       "Invalid or expired requestState"; adapters/gcf logs
//	                       a warning at start saying so. Set by: Terraform, as a
//	                       secret environment variable that Cloud Functions
//	                       fill from the Secret Manager secret it creates
//	                       (latest version, read when an instance starts).
//	MCPFN_ALLOWED_ORIGINS  Comma-separated browser origins accepted
//	                       (https://app.example.com,...), or "*"; see
//	                       core.ServerOptions.AllowedOrigins. Default:
//	                       same-origin browser requests only. Set by: Terraform
//	                       (var.allowed_origins).
//	MCPFN_AUTH_RESOURCE    The MCP endpoint's URL as clients use it. Set, the
//	                       server is an OAuth 2.1 protected resource (package
//	                       auth) accepting the JWT access tokens of
//	                       MCPFN_AUTH_ISSUER. Default: no authorization by the
//	                       server. Set by: Terraform (modules/mcp-gcf's auth
//	                       variable sets every MCPFN_AUTH_* variable), or you.
//	MCPFN_AUTH_ISSUER      The authorization server's issuer URL; required with
//	                       MCPFN_AUTH_RESOURCE.
//	MCPFN_AUTH_JWKS_URL    Its JWKS URL. Default: from its metadata.
//	MCPFN_AUTH_SCOPES      Space-separated scopes every request needs.
//	MCPFN_AUTH_METADATA_URL, MCPFN_AUTH_METADATA_PATH
//	                       Where the protected resource metadata is served
//	                       (auth.Options.MetadataURL, MetadataPath); a gen1 URL
//	                       (https://REGION-PROJECT.cloudfunctions.net/NAME)
//	                       needs them. Default: derived from the resource.
//	MCPFN_LOG_LEVEL        debug, info, warn or error. Default: info. Set by:
//	                       Terraform (var.log_level).
//	MCPFN_LOG_FORMAT       json (the default): one JSON object a line with the
//	                       "severity" and "message" fields Cloud Logging reads
//	                       as structured entries; text: plain key=value lines.
//	                       Logs go to stderr. Set by: you.
//
//	MCPFN_TASK_RUNNER      inprocess (the default, and the only value): the
//	                       tasks of the Tasks extension run on the instance that
//	                       created or resumed them, and live in its memory
//	                       (core's in-memory TaskStore). A poll that reaches
//	                       another instance would get -32602 (unknown task), so
//	                       [Handler] (and [Start]) refuse a server with task
//	                       tools unless MCPFN_MAX_INSTANCES=1; for tasks across
//	                       instances, set TaskStore on the options [Load]
//	                       returns to a shared store.
//	MCPFN_MAX_INSTANCES    The function's bound on instances, the same number
//	                       as its --max-instances (a whole number; 0 or unset:
//	                       no bound the kit knows of). 1 says that one instance
//	                       serves every request: its memory is then every
//	                       instance's, [Load] names store/memory's TaskStore,
//	                       and task tools are served. During a new revision's
//	                       rollout the old instance's tasks end with it. Set
//	                       by: Terraform (var.max_instance_count).
//	MCPFN_TASK_CLAIM_TIMEOUT
//	                       How long a working task no run has claimed waits
//	                       for its runner (core.ServerOptions.TaskClaimTimeout):
//	                       whole seconds (300) or a Go duration (5m),
//	                       positive. Default: core.DefaultTaskClaimTimeout.
//	                       Set by: you.
//
// MCPFN_DYNAMODB_TABLE, MCPFN_KEYS_SECRET_ID and MCPFN_STREAMING belong to
// deploy/lambdaenv: set here, they are an error rather than being ignored
// (Cloud Functions always stream; for a shared session or task store, set
// SessionStore or TaskStore on the options [Load] returns: the kit links no
// AWS SDK). A variable that is malformed,
// or set without the one it needs, makes [Load] (and so [Start]) fail with
// an error that names it.
//
// # Many instances
//
// Cloud Functions run several instances of a function. Without
// MCPFN_STATE_KEY each seals requestState with its own key: adapters/gcf
// logs one warning at start naming the variable, and an instance that
// receives a state sealed by another logs it at level warn (at most one a
// minute); the client gets -32602 "Invalid or expired requestState" either
// way. Legacy sessions live in each instance unless you set a shared
// SessionStore. The tasks of the Tasks extension live in each instance's
// memory too, and must be readable through any instance as soon as they
// are created (tasks.md §Task Creation): [Handler] refuses a server with
// task tools, naming the fixes, unless MCPFN_MAX_INSTANCES=1 says the
// function runs one instance (the mcp-gcf module's max_instance_count = 1);
// a program that sets a shared TaskStore on the options [Load] returns and
// calls gcf.Handler itself serves them on any number of instances.
//
// # Telemetry
//
// [StartWith] and [HandlerWith] instrument the server with [Options]:
// Middleware wraps every request (otel.Middleware of module
// github.com/mcpfn/mcpfn/otel makes its span and its
// mcp.server.operation.duration point), and Configure changes anything
// else the environment does not say (otel.Instrument, instructions, a
// shared TaskStore):
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	gcfenv.StartWith("MCP", impl, setup, &gcfenv.Options{
//		Middleware: []core.Middleware{otel.Middleware(otel.Options{TracerProvider: tp})},
//	})
//
// The kit flushes nothing at the end of a request, unlike deploy/lambdaenv:
// a flush there would hold each response until the export ends, and a
// Cloud Function's instance is not frozen between requests as a Lambda
// sandbox is, so the SDK's batch exporters deliver on their own schedule.
// Its CPU is throttled outside requests, though, which delays them, and an
// instance being shut down gets SIGTERM 10 seconds before it is killed:
// shut the providers down then (tp.Shutdown, with signal.Notify in init)
// so that its last batch leaves.
//
// # Rotation
//
// An instance reads MCPFN_STATE_KEY when it starts, and instances started
// before and after a new secret version run side by side. Rotate in three
// versions of the secret, each once every instance runs the previous one
// (a new deployment revision restarts them): "OLD,NEW" (NEW opens), then
// "NEW,OLD" (NEW seals), then, after the state TTL, "NEW". A state sealed
// with a key an instance does not list is answered with the invalid-state
// error and logged with its key id (each key's id is derived from it).
package gcfenv
