package gcfenv_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
)

type addArgs struct {
	Left  int `json:"left"`
	Right int `json:"right"`
}

func add(ctx context.Context, req *core.CallToolRequest, in addArgs) (int, error) {
	return in.Left + in.Right, nil
}

// A whole Cloud Function, in init of a package at the root of its module:
// deploy it with --entry-point=MCP.
func ExampleStart() {
	gcfenv.Start("MCP", core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	})
}

// A whole Cloud Function with a middleware around every request; with
// OpenTelemetry (module github.com/mcpfn/mcpfn/otel and the SDK), the
// middleware is otel.Middleware(otel.Options{TracerProvider: tp}).
func ExampleStartWith() {
	audit := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			out, err := next(ctx, c)
			log.Printf("%s %s: %s", c.Method, c.Target, out.Status(err))
			return out, err
		}
	}
	gcfenv.StartWith("MCP", core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	}, &gcfenv.Options{
		Middleware: []core.Middleware{audit},
		Configure:  func(so *core.ServerOptions) { so.Instructions = "Adds numbers." },
	})
}

// Handler returns the function without registering it, here to call it
// directly.
func ExampleHandler() {
	os.Setenv("MCPFN_LOG_LEVEL", "error")
	defer os.Unsetenv("MCPFN_LOG_LEVEL")
	fn, err := gcfenv.Handler(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add",`+
		`"arguments":{"left":1,"right":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"} {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	fn(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"text":"3"`))
	// Output: 200 true
}
