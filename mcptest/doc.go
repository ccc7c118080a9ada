// Package mcptest tests MCP servers built with package core the way their
// clients reach them: it connects a [client.Conn] (package
// github.com/mcpfn/mcpfn/client) to a [core.Server] in the test's process,
// in either era of the protocol, over HTTP without a socket, and lets the
// test record the wire. It is to mcpfn what go-sdk's InMemoryTransport and
// mcp-go's mcptest are to theirs, one layer lower: the bytes that cross
// are the Streamable HTTP requests and responses a deployed server
// exchanges, so headers, SSE streams, sessions and cancellation are
// tested too.
//
// # Connecting
//
// [Connect] returns a Conn to a server; the test's end closes it:
//
//	func TestAdd(t *testing.T) {
//		srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
//		core.AddTool(srv, &core.Tool{Name: "add"}, add)
//		for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
//			c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
//			res, err := c.CallTool(t.Context(), "add", map[string]any{"left": 2, "right": 3})
//			if err != nil || res.IsError {
//				t.Fatalf("%v: add: %v %+v", mode, err, res)
//			}
//		}
//	}
//
// [Options].Mode picks the era: [client.ModeModern] is 2026-07-28 (each
// request stateless, input rounds as input_required results),
// [client.ModeLegacy] an initialize-based 2025-11-25 session (input
// requests sent on the call's SSE stream), and the zero [client.ModeAuto]
// probes as a client does against an unknown server. [Options].Client
// configures the rest of the client: its Elicitation, Sampling and Roots
// handlers answer the server's input requests in both eras, Tasks declares
// the Tasks extension, [client.WithProgress] on a call receives the
// handler's progress as it is sent.
//
// # Recording the wire
//
// A [Recorder] in [Options].Record keeps every HTTP exchange: method, URL,
// headers and body of the request (the Mcp-Method and Mcp-Name headers,
// the Mcp-Session-Id of a legacy session, the JSON-RPC body), and status,
// headers and body of the response, an SSE stream as it was received.
// [Exchange.ResponseMessages] splits a response into its JSON-RPC messages.
//
// # Transport
//
// [Transport] is the in-process http.RoundTripper Connect uses, for any
// http.Handler: a server wrapped in middleware or an adapter, or a client
// of your own. It streams responses with a bounded buffer, cancels the
// handler's context when the client gives up, and makes requests look to
// the handler as net/http's server makes them, on a loopback address for
// a loopback URL, so that a core.Server's DNS rebinding protection applies
// as on a developer's machine. [Server] serves a core.Server on a real
// loopback socket instead, for tests that need one.
//
// Nothing in the package keeps a goroutine beyond a test: each request's
// handler runs on a goroutine of its own that ends when the handler
// returns, and Connect's cleanup waits for them. The transport works inside
// a testing/synctest bubble when the server and the Conn are created in it.
package mcptest
