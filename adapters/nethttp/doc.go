// Package nethttp serves an mcpfn server ([core.Server]) with the standard
// library's net/http.
//
// [core.Server] is itself an [http.Handler] implementing the whole Streamable
// HTTP transport (status codes, JSON and SSE responses, Origin checks), so
// the handler here only routes the endpoint path and adds nothing to the
// protocol: the same server behaves identically behind net/http, AWS Lambda
// (package adapters/lambda) and Google Cloud Functions (package adapters/gcf).
//
// Quick start:
//
//	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
//	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
//	http.ListenAndServe("127.0.0.1:8080", nethttp.Handler(srv)) // serves /mcp
//
// [Serve] runs an [http.Server] until its context ends, then closes the MCP
// server's long-lived streams gracefully and shuts down.
package nethttp
