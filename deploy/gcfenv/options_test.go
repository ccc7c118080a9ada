package gcfenv_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
	"github.com/mcpfn/mcpfn/internal/callrec"
	"github.com/mcpfn/mcpfn/store/memory"
)

// TestHandlerWith: the middleware of Options wraps every request, inside
// the request record, and Configure changes the loaded options before the
// server is made: with a shared TaskStore it sets, a server with task
// tools is served on many instances.
func TestHandlerWith(t *testing.T) {
	setenv(t, "MCPFN_LOG_LEVEL", "error")
	calls := &callrec.Recorder[string]{See: func(_ context.Context, c *core.Call, out *core.Outcome, err error) string {
		return c.Method + " " + c.Target + " " + out.Status(err)
	}}
	var configured *core.ServerOptions
	fn, err := gcfenv.HandlerWith(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
		core.AddTool(s, &core.Tool{Name: "job", Description: "Runs as a task."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "done", nil },
			&core.ToolOptions{TaskSupport: core.TaskRequired})
	}, &gcfenv.Options{
		Middleware: []core.Middleware{calls.Middleware},
		Configure: func(so *core.ServerOptions) {
			configured = so
			so.Instructions = "Adds numbers."
			so.TaskStore = &memory.TaskStore{} // stands for a store every instance shares
		},
	})
	if err != nil {
		t.Fatalf("HandlerWith: %v", err)
	}
	if configured == nil || len(configured.Middleware) != 1 {
		t.Fatalf("Configure saw %+v, want the loaded options with the middleware", configured)
	}
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add",`+
		`"arguments":{"left":1,"right":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"} {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	fn(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"text":"3"`) {
		t.Fatalf("tools/call add: %d %s", rec.Code, rec.Body)
	}
	if got := calls.Seen(); len(got) != 1 || got[0] != "tools/call add ok" {
		t.Errorf("the middleware saw %q, want one tools/call add ok", got)
	}

	// Without the store, the same server is refused, as by Handler.
	if _, err := gcfenv.HandlerWith(core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "job", Description: "Runs as a task."},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "done", nil },
			&core.ToolOptions{TaskSupport: core.TaskRequired})
	}, &gcfenv.Options{Middleware: []core.Middleware{calls.Middleware}}); err == nil || !strings.Contains(err.Error(), "MCPFN_MAX_INSTANCES") {
		t.Errorf("task tools in memory: %v, want the refusal", err)
	}
}
