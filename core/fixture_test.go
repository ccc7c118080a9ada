package core_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// AddArgs are the arguments of the fixture's "add" tool.
type AddArgs struct {
	A int `json:"a" jsonschema:"description=The first addend"`
	B int `json:"b" jsonschema:"description=The second addend"`
}

type noArgs struct{}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.A + in.B, nil
}

// newFixture returns a server with a little of everything: tools that
// succeed and fail in every way, a resource, a template, a prompt and a
// completion handler.
func newFixture(t testing.TB, opts *core.ServerOptions) *core.Server {
	t.Helper()
	var o core.ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.CompletionHandler == nil {
		o.CompletionHandler = func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
			return &core.CompleteResult{Completion: core.Completion{Values: []string{req.Params.Argument.Value + "1"}}}, nil
		}
	}
	srv := core.NewServer(testImpl, &o)
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two integers."}, add)
	core.AddTool(srv, &core.Tool{Name: "panic", Description: "Panics."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			panic("secret panic text 0xdeadbeef")
		})
	core.AddTool(srv, &core.Tool{Name: "plain_error", Description: "Fails with a plain error."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", errors.New("secret database password hunter2")
		})
	core.AddTool(srv, &core.Tool{Name: "invalid_params", Description: "Refuses its parameters."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", core.InvalidParamsError("the widget %q is unknown", "w1")
		})
	core.AddTool(srv, &core.Tool{Name: "server_error", Description: "Fails with a server error."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", core.InternalError("the upstream service is down")
		})
	core.AddTool(srv, &core.Tool{Name: "tool_error", Description: "Fails as a tool."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", core.ToolErrorf("the date %s is in the past", "2020-01-01")
		})
	srv.AddResource(&core.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "text/plain", Text: "static text"}}}, nil
		})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			if req.Vars["id"] == "missing" {
				return nil, core.ResourceNotFoundError(req.URI)
			}
			if req.Vars["id"] == "empty" {
				return &core.ReadResourceResult{}, nil
			}
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "item " + req.Vars["id"]}}}, nil
		})
	srv.AddPrompt(&core.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []core.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: core.RoleUser, Content: &core.TextContent{Text: "Hello, " + req.Arguments["who"]}}}}, nil
		})
	return srv
}

// assertServes checks that srv still answers a valid call correctly.
func assertServes(t testing.TB, h http.Handler) {
	t.Helper()
	r := callReq(999, "add", map[string]any{"a": 40, "b": 2}).do(t, h)
	if r.Status != http.StatusOK {
		t.Fatalf("follow-up call: HTTP %d: %s", r.Status, r.Body)
	}
	res := r.result(t)
	if got := textOf(res); got != "42" {
		t.Fatalf("follow-up call: text %q, want 42: %s", got, r.Body)
	}
	r.wantID(t, "999")
}
