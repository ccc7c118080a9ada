// Package gcf serves an mcpfn server ([core.Server]) as a Google Cloud
// Function (2nd gen, HTTP trigger) through the Functions Framework for Go
// (github.com/GoogleCloudPlatform/functions-framework-go).
//
// Cloud Functions hand the function a plain net/http request and a response
// writer that supports [http.Flusher], so SSE responses stream as they are
// written and the server behaves exactly as behind net/http. Registering the
// function is left to your program, in main or init:
//
//	func init() {
//		srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
//		core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//		functions.HTTP("MCP", gcf.Handler(srv))
//	}
//
// Deploy with --entry-point MCP; locally, `FUNCTION_TARGET=MCP PORT=8080 go run .`
// with funcframework.Start serves it at http://localhost:8080/. See
// examples/gcf.
//
// The deploy kit github.com/mcpfn/mcpfn/deploy/gcfenv builds the server
// from the environment the mcp-gcf Terraform module sets (the signing key
// from Secret Manager, authorization, origins, logs) and registers it: with
// it the init above is one call, gcfenv.Start.
//
// # Many instances
//
// Cloud Functions run several instances, and a retry may reach any of them.
// A server without ServerOptions.Keys seals the requestState of multi
// round-trip requests with a random key of its own, which no other
// instance has: the retry of such a request on another instance fails with
// -32602 "Invalid or expired requestState". [Handler] therefore logs one
// warning at init to the server's logger when srv is such a server, naming
// the fix: MCPFN_STATE_KEY with deploy/gcfenv, or ServerOptions.Keys
// (core.StaticKeys from a secret, or a core.KeyProvider). The instance that
// receives a state sealed with a key it does not have logs that too, at
// level warn, at most once a minute; the answer on the wire is the same
// -32602 error. Use a shared session store (your own core.SessionStore)
// when legacy sessions must survive a change of instance.
//
// The tasks of the Tasks extension live in the instance's memory unless
// ServerOptions.TaskStore names a store every instance shares: a poll that
// reaches another instance gets -32602 (unknown task). [Handler] logs one
// warning at init for a server with task tools and no TaskStore, naming
// the fixes (a shared TaskStore, or one instance: deploy/gcfenv refuses to
// start such a server unless MCPFN_MAX_INSTANCES=1 says the function runs
// one). A server built without a Logger logs to slog.Default().
package gcf
