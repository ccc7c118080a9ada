package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// exampleServer starts a small MCP server on loopback.
func exampleServer() *httptest.Server {
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *core.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	core.AddTool(srv, &core.Tool{Name: "confirm", Description: "Asks before acting."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if r, ok := req.Input.Elicitation("ok"); ok {
				return "answer: " + r.Action, nil
			}
			return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Proceed?",
				json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
		})
	return httptest.NewServer(nethttp.Handler(srv))
}

func Example() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()

	c, err := client.Connect(ctx, ts.URL+"/mcp", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println("modern:", c.Modern(), c.ProtocolVersion())

	tools, _ := c.ListTools(ctx, nil)
	for _, t := range tools {
		fmt.Println("tool:", t.Name)
	}
	res, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// modern: true 2026-07-28
	// tool: confirm
	// tool: greet
	// Hello, Ada!
}

// A Client outlives its connections: it keeps the configuration, the
// handlers, the cache and the era of each endpoint, so its second Connect
// to an endpoint sends no probe.
func ExampleClient() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	cl := client.New(&client.Options{ClientInfo: mcp.Implementation{Name: "example-host", Version: "1"}})
	for range 2 {
		c, err := cl.Connect(ctx, ts.URL+"/mcp")
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(c.ProtocolVersion(), res.Content[0].(*mcp.TextContent).Text, c.Discovery() != nil)
		c.Close()
	}
	// Output:
	// 2026-07-28 Hello, Ada! true
	// 2026-07-28 Hello, Ada! false
}

// Input requests (elicitation) are answered by the handlers of Options, in
// both eras.
func ExampleOptions_elicitation() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
		c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{
			Mode: mode,
			Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
			},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := c.CallTool(ctx, "confirm", nil, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(mode, res.Content[0].(*mcp.TextContent).Text)
		c.Close()
	}
	// Output:
	// modern answer: accept
	// legacy answer: accept
}

// Errors are typed: a JSON-RPC error is an *mcp.Error, which knows the
// request's method and the HTTP status it came with.
func Example_errors() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	c, _ := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Mode: client.ModeModern})
	defer c.Close()
	_, err := c.CallTool(ctx, "no-such-tool", nil, nil)
	var e *mcp.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Method(), e.ResponseStatus())
	}
	fmt.Println(errors.Is(err, &mcp.Error{Code: mcp.CodeInvalidParams}), errors.Is(err, mcp.ErrHeaderMismatch))
	// Output:
	// -32602 tools/call 200
	// true false
}

// CallOptions.RawResult keeps a result as the server sent it, beside the decoded
// value.
func ExampleCallOptions_rawResult() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	c, _ := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Mode: client.ModeLegacy})
	defer c.Close()
	var raw json.RawMessage
	res, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"}, &client.CallOptions{RawResult: &raw})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(string(raw))
	// Output:
	// Hello, Ada!
	// {"content":[{"type":"text","text":"Hello, Ada!"}]}
}

// Middleware sees every request the client sends, in both eras: here it
// adds W3C trace context to _meta and to the HTTP headers, and prints each
// tools/call with its outcome.
func ExampleMiddleware() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	trace := func(next client.Handler) client.Handler {
		return func(ctx context.Context, c *client.Call) (*client.Outcome, error) {
			const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			c.SetMeta("traceparent", tp)
			c.SetHeader("Traceparent", tp)
			out, err := next(ctx, c)
			if c.Method == "tools/call" {
				fmt.Println(c.Method, c.Target, c.Version, "round", c.Round, out.Status(err))
			}
			return out, err
		}
	}
	conn, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{
		Middleware: []client.Middleware{trace},
		Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"ok": true}}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if _, err := conn.CallTool(ctx, "confirm", nil, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// tools/call confirm 2026-07-28 round 0 input_required
	// tools/call confirm 2026-07-28 round 1 ok
}

// With Options.Tasks a server may run a tool call as a task (the Tasks
// extension). CallTool waits for it; CallToolTask hands out the task, whose
// ID can be kept (in a database, say) to resume waiting later, from
// another process too, with Conn.Task.
func ExampleConn_CallToolTask() {
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1"}, nil)
	core.AddTool(srv, &core.Tool{Name: "report", Description: "Builds a report, as a task."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return "report ready", nil
		}, &core.ToolOptions{TaskSupport: core.TaskRequired})
	ts := httptest.NewServer(nethttp.Handler(srv))
	defer ts.Close()
	ctx := context.Background()

	c, err := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Tasks: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, task, err := c.CallToolTask(ctx, "report", nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	id := task.ID() // persist it

	res, err := c.Task(id, nil).Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// report ready
}

// Forward relays a request a downstream client built, as it is: here a
// 2026-07-28 tools/call whose input_required result goes back for that
// client to answer.
func ExampleConn_Forward() {
	ts := exampleServer()
	defer ts.Close()
	ctx := context.Background()
	c, _ := client.Connect(ctx, ts.URL+"/mcp", &client.Options{Mode: client.ModeModern})
	defer c.Close()
	msg := json.RawMessage(`{"jsonrpc":"2.0","id":"host-1","method":"tools/call","params":{"name":"confirm",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
	res, err := c.Forward(ctx, msg, func(n client.Notification) { fmt.Println("notification:", n.Method) })
	if err != nil {
		fmt.Println(err)
		return
	}
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	json.Unmarshal(res, &r)
	fmt.Println(r.ResultType, len(r.InputRequests))
	// Output:
	// input_required 1
}
