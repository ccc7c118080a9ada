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
// Cloud Functions run several instances: use a shared session store
// (store/dynamo or your own core.SessionStore) and shared signing keys
// (core.ServerOptions.Keys) when legacy sessions or multi round-trip state
// must survive a change of instance.
package gcf
