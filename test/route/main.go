// Command route serves one 2026-07-28 tools/call through core.Server
// (the request record on, as by default) so that a debugger can follow it:
// the route of a request that docs/design.md ("The route of a request")
// describes is measured by tracing this program with Delve and counting the
// trace with ./count:
//
//	cd test/route
//	dlv trace -s 40 'github.com/mcpfn/mcpfn/core\.' 2>&1 | go run ./count
//
// (go install github.com/go-delve/delve/cmd/dlv@latest for dlv.)
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcpfn/mcpfn/core"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func main() {
	srv := core.NewServer(core.Implementation{Name: "calc", Version: "1.0.0"}, &core.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Adds two numbers."}, func(ctx context.Context, req *core.CallToolRequest, in addIn) (int, error) {
		return in.A + in.B, nil
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "add")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"text":"3"`) {
		fmt.Fprintln(os.Stderr, "route: unexpected answer:", rec.Code, rec.Body.String())
		os.Exit(1)
	}
}
