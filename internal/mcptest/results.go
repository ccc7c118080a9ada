package mcptest

import (
	"strings"

	"github.com/mcpfn/mcpfn/mcp"
)

// Text returns the text of r's text content blocks, joined with nothing
// between them; other blocks are skipped.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
