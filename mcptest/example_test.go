package mcptest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/mcptest"
)

// newCalculator is the server under test: one typed tool.
func newCalculator() *core.Server {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, &core.ServerOptions{DisableRequestLog: true})
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	return srv
}

// A test of a tool, in both eras. Connect closes the connection when the
// test ends.
func ExampleConnect() {
	testAdd := func(t *testing.T) { // func TestAdd(t *testing.T) in a _test.go file
		srv := newCalculator()
		defer srv.Close()
		for _, mode := range []client.Mode{client.ModeModern, client.ModeLegacy} {
			c := mcptest.Connect(t, srv, &mcptest.Options{Mode: mode})
			res, err := c.CallTool(t.Context(), "add", map[string]any{"left": 2, "right": 3}, nil)
			if err != nil {
				t.Fatalf("%v: %v", mode, err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "5" {
				t.Errorf("%v: add(2, 3) = %s, want 5", mode, got)
			}
		}
	}
	_ = testAdd
}

// Transport serves any http.Handler in process: here a client.Conn of
// each era reaches the same server, without a socket.
func ExampleTransport() {
	srv := newCalculator()
	defer srv.Close()
	ctx := context.Background()
	hc := &http.Client{Transport: mcptest.Transport(srv)}
	for _, mode := range []client.Mode{client.ModeAuto, client.ModeLegacy} {
		c, err := client.Connect(ctx, mcptest.DefaultURL, &client.Options{Mode: mode, HTTPClient: hc})
		if err != nil {
			log.Fatal(err)
		}
		res, err := c.CallTool(ctx, "add", map[string]any{"left": 2, "right": 3}, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.ProtocolVersion(), res.Content[0].(*mcp.TextContent).Text)
		c.Close()
	}
	// Output:
	// 2026-07-28 5
	// 2025-11-25 5
}

// A Recorder shows the requests a call made on the wire.
func ExampleRecorder() {
	srv := newCalculator()
	defer srv.Close()
	ctx := context.Background()
	rec := &mcptest.Recorder{}
	hc := &http.Client{Transport: rec.Wrap(mcptest.Transport(srv))}
	c, err := client.Connect(ctx, mcptest.DefaultURL, &client.Options{Mode: client.ModeModern, HTTPClient: hc})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "add", map[string]any{"left": 2, "right": 3}, nil); err != nil {
		log.Fatal(err)
	}
	for _, x := range rec.Exchanges() {
		ms, _ := x.ResponseMessages()
		fmt.Println(x.Method, x.Header.Get("Mcp-Method"), x.Header.Get("Mcp-Name"), x.Status, len(ms))
	}
	// Output:
	// POST tools/list  200 1
	// POST tools/call add 200 1
}
