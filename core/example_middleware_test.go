package core_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

// A middleware that refuses calls of one tool and prints what it saw of the
// others.
func ExampleMiddleware() {
	deny := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
			if c.Method == "tools/call" && c.Target == "delete_all" {
				return nil, core.NewError(core.CodeInvalidParams, "delete_all is disabled")
			}
			out, err := next(ctx, c)
			fmt.Println(c.Method, c.Target, c.ProtocolVersion, out.Status(err))
			return out, err
		}
	}
	srv := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"},
		&core.ServerOptions{Middleware: []core.Middleware{deny}, DisableRequestLog: true})
	core.AddTool(srv, &core.Tool{Name: "greet"}, func(ctx context.Context, req *core.CallToolRequest, in struct{}) (string, error) {
		return "hello", nil
	})
	core.AddTool(srv, &core.Tool{Name: "delete_all"}, func(ctx context.Context, req *core.CallToolRequest, in struct{}) (string, error) {
		return "deleted", nil
	})
	for _, tool := range []string{"greet", "delete_all"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `",` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", tool)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if strings.Contains(w.Body.String(), "disabled") {
			fmt.Println(tool, "refused")
		}
	}
	// Output:
	// tools/call greet 2026-07-28 ok
	// delete_all refused
}
