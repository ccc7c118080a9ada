package client_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestNilLoggerIsDefault checks that a client built without a Logger warns
// through slog.Default() rather than nowhere: a listed tool whose
// x-mcp-header declaration is invalid is dropped with a warning. It
// replaces the default logger, so it is not parallel.
func TestNilLoggerIsDefault(t *testing.T) {
	var logs mcptest.LogBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	bad := &core.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Not A Header"}}}`)}
	url, _ := newServer(t, &core.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
		ListToolsHandler: func(context.Context, *core.ListToolsRequest) (*core.ListToolsResult, error) {
			return &core.ListToolsResult{Tools: []*core.Tool{bad}}, nil
		},
		CallToolHandler: func(context.Context, *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{}, nil
		},
	}, nil)
	ctx := context.Background()
	c, err := client.Connect(ctx, url, &client.Options{Mode: client.ModeModern})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "tool dropped") {
		t.Errorf("a client without a Logger did not warn through slog.Default():\n%q", l)
	}
}
