package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestNilLoggerIsDefault checks that a client built without a Logger warns
// through slog.Default() rather than nowhere: a listed tool whose
// x-mcp-header declaration is invalid is dropped with a warning. The server
// would not list such a tool, so a middleware answers tools/list in its
// place. It replaces the default logger, so it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	logs := mcptest.DefaultLogs(t)

	srv := core.NewServer(core.Implementation{Name: "test", Version: "1"}, &core.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	badList := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") != "tools/list" {
				next.ServeHTTP(w, r)
				return
			}
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"bad","inputSchema":`+
				`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Not A Header"}}}}]}}`, req.ID)
		})
	}
	ts := httptest.NewServer(nethttp.NewHandler(srv, &nethttp.Options{Middleware: badList}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	c, err := client.Connect(ctx, ts.URL+nethttp.DefaultPath, &client.Options{Mode: client.ModeModern})
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := c.ListTools(ctx, nil); err != nil || len(tools) != 0 {
		t.Fatalf("ListTools = %v, %v; want the bad tool dropped", tools, err)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "tool dropped") {
		t.Errorf("a client without a Logger did not warn through slog.Default():\n%q", l)
	}
}
