package nethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

type greetArgs struct {
	Name string `json:"name"`
}

func ExampleHandler() {
	srv := core.NewServer(core.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	core.AddTool(srv, &core.Tool{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *core.CallToolRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	ts := httptest.NewServer(nethttp.Handler(srv)) // in production: http.ListenAndServe("127.0.0.1:8080", ...)
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(b), `"text":"Hello, Ada!"`))

	other, _ := http.Get(ts.URL + "/elsewhere")
	fmt.Println(other.StatusCode)
	// Output:
	// 200 true
	// 404
}

// ExampleServe shows a main that serves until SIGINT or SIGTERM, then closes
// listen streams gracefully.
func ExampleServe() {
	srv := core.NewServer(core.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithCancel(context.Background()) // signal.NotifyContext in a real main
	cancel()
	if err := nethttp.Serve(ctx, "127.0.0.1:0", srv, nil); err != nil {
		fmt.Println(err)
	}
	fmt.Println("stopped")
	// Output: stopped
}
