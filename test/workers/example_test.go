package workers_test

import (
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/mcp"
	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// TestExample runs examples/workers in workerd with a fresh Go instance for
// every request, and uses it with package client: a call, a streamed call
// and a task whose run happens in a request of its own, started by the
// task's Durable Object, and whose result is read by other requests: all
// of it lives in Durable Objects.
func TestExample(t *testing.T) {
	for _, mode := range []string{"shared", "request"} {
		t.Run(mode, func(t *testing.T) {
			w := workerdtest.Start(t, workerdtest.Package(t, "./examples/workers"), map[string]string{
				"MCPFN_STATE_KEY": testKey, "MCPFN_LOCAL_ADDR": "127.0.0.1:8787", "MCPFN_GO_INSTANCE": mode})
			ctx := t.Context()
			c, err := client.Connect(ctx, w.URL+"/mcp", &client.Options{Tasks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			text := func(r *mcp.CallToolResult) string {
				if r == nil || len(r.Content) == 0 {
					return ""
				}
				tc, _ := r.Content[0].(*mcp.TextContent)
				if tc == nil {
					return ""
				}
				return tc.Text
			}
			r, err := c.CallTool(ctx, "add", map[string]int{"left": 40, "right": 2}, nil)
			if err != nil || text(r) != "42" {
				t.Fatalf("add: %q, %v", text(r), err)
			}
			r, err = c.CallTool(ctx, "count", map[string]int{"to": 3}, nil)
			if err != nil || text(r) != "counted to 3" {
				t.Fatalf("count: %q, %v", text(r), err)
			}
			r, h, err := c.CallToolTask(ctx, "report", map[string]string{"topic": "edges"}, nil)
			if err != nil || r != nil || h == nil {
				t.Fatalf("report as a task: %v, %v, %v", r, h, err)
			}
			r, err = h.Wait(ctx)
			if err != nil || text(r) != "a report on edges" {
				t.Fatalf("the task's result: %q, %v", text(r), err)
			}
		})
	}
}
