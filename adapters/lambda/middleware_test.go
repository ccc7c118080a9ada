package lambda_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/callrec"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// TestMiddlewareThroughEvent checks that a core middleware and the request
// record see a request that arrives as a Lambda function URL event: the
// method, target, era and headers (the X-Ray trace header among them), and
// the event itself through the request's context.
func TestMiddlewareThroughEvent(t *testing.T) {
	t.Parallel()
	var logs mcptest.LogBuffer
	rec := &callrec.Recorder[string]{See: func(ctx context.Context, c *core.Call, out *core.Outcome, err error) string {
		ev, _ := lambda.RequestFromContext(ctx)
		_, isURL := ev.(*events.LambdaFunctionURLRequest)
		return strings.Join([]string{c.Method, c.Target, c.ProtocolVersion, out.Status(err),
			c.Header.Get("X-Amzn-Trace-Id"), map[bool]string{true: "url event"}[isURL]}, " ")
	}}
	srv := core.NewServer(testImpl, &core.ServerOptions{
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
		Middleware: []core.Middleware{rec.Middleware},
	})
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two integers."},
		func(ctx context.Context, req *core.CallToolRequest, in struct{ A, B int }) (int, error) {
			return in.A + in.B, nil
		})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"A":40,"B":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/mcp", Body: body,
		Headers: map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream",
			"host": "localhost", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "add",
			"x-amzn-trace-id": "Root=1-643eccfa-2c6028925c2b249524664087"},
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "r1", DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"}},
	}
	raw, _ := json.Marshal(ev)
	v, err := lambda.Wrap(srv, nil)(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	res := readResponse(t, v)
	if res.Status != 200 || !strings.Contains(res.Body, `"text":"42"`) {
		t.Fatalf("response %+v", res)
	}
	want := "tools/call add 2026-07-28 ok Root=1-643eccfa-2c6028925c2b249524664087 url event"
	if seen := rec.Seen(); len(seen) != 1 || seen[0] != want {
		t.Errorf("the middleware saw %q, want %q", seen, want)
	}
	if n := strings.Count(logs.String(), `"msg":"mcp request"`); n != 1 || !strings.Contains(logs.String(), `"target":"add"`) {
		t.Errorf("%d request records: %s", n, logs.String())
	}
}
