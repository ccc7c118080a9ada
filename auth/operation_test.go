package auth_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/auth"
	"github.com/mcpfn/mcpfn/auth/authtest"
	"github.com/mcpfn/mcpfn/core"
)

// TestCompletionScopes: completion/complete of a prompt needs the prompt's
// PromptScopes, as prompts/get does; Options.Scopes sees the reference.
func TestCompletionScopes(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []core.Operation
	)
	e := newEnv(t, envConfig{
		opts: func(o *auth.Options, as *authtest.Server, res string) {
			o.PromptScopes = map[string][]string{"secret": {"files:admin"}}
			o.Scopes = func(ctx context.Context, op core.Operation) []string {
				if op.Method == "completion/complete" {
					mu.Lock()
					seen = append(seen, op)
					mu.Unlock()
					if op.Ref == "ref/resource" && op.Name == "file:///private/{id}" {
						return []string{"files:admin"}
					}
				}
				return nil
			}
		},
		srvOpts: func(o *core.ServerOptions) {
			o.CompletionHandler = func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
				return &core.CompleteResult{Completion: core.Completion{Values: []string{"the secret plan"}}}, nil
			}
		},
	})
	e.srv.AddPrompt(&core.Prompt{Name: "secret", Arguments: []core.PromptArgument{{Name: "topic"}}},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{}}, nil
		})
	complete := func(ref map[string]any) rpc {
		return rpc{method: "completion/complete", params: map[string]any{"ref": ref, "argument": map[string]any{"name": "topic", "value": "the"}}}
	}
	forbidden := want{status: http.StatusForbidden, error: "insufficient_scope", scope: "mcp files:admin", code: core.CodeInvalidRequest}
	prompt := map[string]any{"type": "ref/prompt", "name": "secret"}
	private := map[string]any{"type": "ref/resource", "uri": "file:///private/{id}"}
	check(t, e, e.do(t, e.token("mcp"), rpc{method: "prompts/get", params: map[string]any{"name": "secret"}}), forbidden)
	check(t, e, e.do(t, e.token("mcp"), complete(prompt)), forbidden)
	check(t, e, e.do(t, e.token("mcp"), complete(private)), forbidden)
	check(t, e, e.do(t, e.token("mcp files:admin"), complete(prompt)), want{status: 200})
	check(t, e, e.do(t, e.token("mcp"), complete(map[string]any{"type": "ref/resource", "uri": "file:///public/{id}"})), want{status: 200})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0].Name != "secret" || seen[0].Ref != "ref/prompt" || string(seen[0].Arguments) != `{"name":"topic","value":"the"}` {
		t.Fatalf("Options.Scopes saw %+v", seen)
	}
}

// TestStepUpNamesTheUnion: a run-time step-up (RequireScopes) inside a tool
// with its own scopes names every scope the call needs: Required, the tool's
// ToolScopes, Options.Scopes and the step-up scopes; a token with exactly
// those passes.
func TestStepUpNamesTheUnion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envConfig{opts: func(o *auth.Options, as *authtest.Server, res string) {
		o.ToolScopes["write-admin"] = []string{"files:write"}
		o.Implies = nil // no hierarchy: every scope must be named
		o.Scopes = func(ctx context.Context, op core.Operation) []string {
			if op.Name == "write-admin" {
				return []string{"audit"}
			}
			return nil
		}
	}})
	core.AddTool(e.srv, &core.Tool{Name: "write-admin", Description: "Writes, then needs admin at run time."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if err := auth.RequireScopes(ctx, "admin"); err != nil {
				return "", err
			}
			return "admin write done", nil
		})
	r := e.do(t, e.token("mcp files:write audit"), call("write-admin"))
	check(t, e, r, want{status: http.StatusForbidden, error: "insufficient_scope", scope: "mcp files:write audit admin", code: core.CodeInvalidRequest})
	check(t, e, e.do(t, e.token(r.challenge(t)["scope"]), call("write-admin")), want{status: 200, text: "admin write done"})
	// Another operation on the same server names only its own needs.
	r = e.do(t, e.token("mcp"), call("stepup"))
	check(t, e, r, want{status: http.StatusForbidden, error: "insufficient_scope", scope: "mcp admin", code: core.CodeInvalidRequest})
}
