// Command gosdk serves the three benchmark tools (add, echo, payload) with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk) in stateless mode
// with JSON responses.
package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpfn/mcpfn/test/bench/internal/serve"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type echoIn struct {
	Text string `json:"text"`
}

type payloadIn struct {
	N int `json:"n"`
}

const maxPayload = 16 << 20

func main() {
	serve.Main("gosdk", newHandler())
}

// newHandler returns the MCP handler serving the three tools.
func newHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds a and b."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			// A nil result makes the SDK fill in structuredContent and its JSON
			// text as a text content block.
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "payload", Description: "Returns n bytes of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in payloadIn) (*mcp.CallToolResult, any, error) {
			n := min(max(in.N, 0), maxPayload)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}, nil, nil
		})

	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}
