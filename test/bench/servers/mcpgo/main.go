// Command mcpgo serves the three benchmark tools (add, echo, payload) with
// github.com/mark3labs/mcp-go in stateless streamable HTTP mode.
package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpfn/mcpfn/test/bench/internal/serve"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

const maxPayload = 16 << 20

func main() {
	serve.Main("mcpgo", newHandler())
}

// newHandler returns the MCP handler serving the three tools.
func newHandler() http.Handler {
	s := server.NewMCPServer("mcpgo-bench", "1.0.0", server.WithToolCapabilities(false))

	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds a and b."),
		mcp.WithInteger("a", mcp.Required()),
		mcp.WithInteger("b", mcp.Required()),
		mcp.WithOutputSchema[addOut](),
	), mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in addIn) (addOut, error) {
		// NewStructuredToolHandler sets structuredContent and its JSON text
		// as a text content block.
		return addOut{Sum: in.A + in.B}, nil
	}))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Returns text."),
		mcp.WithString("text", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	s.AddTool(mcp.NewTool("payload",
		mcp.WithDescription("Returns n bytes of text."),
		mcp.WithInteger("n", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := min(max(req.GetInt("n", 0), 0), maxPayload)
		return mcp.NewToolResultText(strings.Repeat("x", n)), nil
	})

	return server.NewStreamableHTTPServer(s, server.WithStateLess(true))
}
