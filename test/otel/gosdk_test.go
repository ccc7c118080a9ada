package otel_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/otel"
)

// TestGoSDKClient: go-sdk's client (not mcpfn's) calls an mcpfn server
// instrumented by the otel module, whose spans go to the real SDK's
// recorder; each call's server span has the conventions' name, kind,
// error.type and status: a result, an isError result (tool_error), an
// unknown tool (-32602), in whichever revision go-sdk negotiates.
func TestGoSDKClient(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	srv := core.NewServer(core.Implementation{Name: "calc", Version: "1"}, &core.ServerOptions{
		Middleware: []core.Middleware{otel.Middleware(otel.Options{TracerProvider: tp})},
		Logger:     slog.New(slog.DiscardHandler), DisableRequestLog: true,
	})
	core.AddTool(srv, &core.Tool{Name: "add"}, func(ctx context.Context, req *core.CallToolRequest, in struct{ A, B int }) (int, error) {
		return in.A + in.B, nil
	})
	core.AddTool(srv, &core.Tool{Name: "fail"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		return "", core.ToolErrorf("it failed")
	})
	ts := httptest.NewServer(nethttp.Handler(srv))
	t.Cleanup(ts.Close)

	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + nethttp.DefaultPath, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	version := s.InitializeResult().ProtocolVersion

	if r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"A": 40, "B": 2}}); err != nil || r.IsError {
		t.Fatalf("add: %+v, %v", r, err)
	}
	if r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}}); err != nil || !r.IsError {
		t.Fatalf("fail: %+v, %v", r, err)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	if we := (*jsonrpc.Error)(nil); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("nope: %v, want a -32602", err)
	}

	type row struct{ errorType, code, status string }
	want := map[string]row{
		"tools/call add":  {"", "", "Unset"},
		"tools/call fail": {"tool_error", "", "Error"},
		// The client's error: status Unset (conventions); nope is not
		// the server's tool, so the span is named by the method alone.
		"tools/call": {"-32602", "-32602", "Unset"},
	}
	got := map[string]row{}
	for _, sp := range rec.Ended() {
		if sp.SpanKind() != trace.SpanKindServer {
			t.Errorf("span %s of kind %v", sp.Name(), sp.SpanKind())
			continue
		}
		if _, ok := want[sp.Name()]; !ok {
			continue
		}
		a := map[attribute.Key]string{}
		for _, kv := range sp.Attributes() {
			a[kv.Key] = kv.Value.Emit()
		}
		if a[otel.KeyMethodName] != "tools/call" || a[otel.KeyProtocolVersion] != version || a[otel.KeyToolName] == "" {
			t.Errorf("%s: attributes %v, want method tools/call, version %s, a tool name", sp.Name(), a, version)
		}
		st := "Unset"
		if sp.Status().Code == codes.Error {
			st = "Error"
		}
		got[sp.Name()] = row{a[otel.KeyErrorType], a[otel.KeyRPCStatusCode], st}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: {error.type, rpc.response.status_code, status} = %v, want %v", name, got[name], w)
		}
	}
}
