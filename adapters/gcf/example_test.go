package gcf_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/mcpfn/mcpfn/adapters/gcf"
	"github.com/mcpfn/mcpfn/core"
)

type AddArgs struct {
	Left  int `json:"left"`
	Right int `json:"right"`
}

// A Cloud Function registers the handler in its package's init; deploy with
// --entry-point MCP. See examples/gcf.
func ExampleHandler() {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	functions.HTTP("MCP", gcf.Handler(srv))
}

// The function is an ordinary HTTP handler: here it answers a 2026-07-28
// tools/call.
func ExampleHandler_call() {
	srv := core.NewServer(core.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."},
		func(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
			return in.Left + in.Right, nil
		})
	fn := gcf.Handler(srv)

	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call",`+
		`"params":{"name":"add","arguments":{"left":2,"right":3},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "add")
	w := httptest.NewRecorder()
	fn(w, r)
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Body.String())
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":5,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calculator","version":"1.0.0"}}}}
}
