package core_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestPrompts checks prompts/get errors and results (2026-07-28
// server/prompts).
func TestPrompts(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	get := func(name string, args any) *resp {
		p := map[string]any{"name": name}
		if args != nil {
			p["arguments"] = args
		}
		return mreq(1, "prompts/get", p).do(t, srv)
	}
	r := get("greet", map[string]any{"who": "Ann"})
	if got := str(at(r.result(t), "messages", 0, "content", "text")); got != "Hello, Ann" {
		t.Errorf("text = %q", got)
	}
	validateSpec(t, modernVersion, "GetPromptResult", r.resultRaw(t))
	get("greet", nil).wantError(t, 200, core.CodeInvalidParams)
	get("greet", map[string]any{"other": "x"}).wantError(t, 200, core.CodeInvalidParams)
	e := get("nope", nil).wantError(t, 200, core.CodeInvalidParams)
	if !strings.Contains(str(e["message"]), "nope") {
		t.Errorf("message %q does not name the prompt", e["message"])
	}
	get("greet", map[string]any{"who": 5}).wantError(t, 200, core.CodeInvalidParams)
	get("greet", []any{"Ann"}).wantError(t, 200, core.CodeInvalidParams)
	// Legacy: the same codes.
	lreq(1, "prompts/get", map[string]any{"name": "greet"}, core.ProtocolVersion20251125, "").do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	lreq(1, "prompts/get", map[string]any{"name": "nope"}, core.ProtocolVersion20251125, "").do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	rl := mreq(2, "prompts/list", nil).do(t, srv)
	validateSpec(t, modernVersion, "ListPromptsResult", rl.resultRaw(t))
	mustPanic(t, func() { srv.AddPrompt(&core.Prompt{Name: "bad name"}, nil) })
}

// TestCompletion checks completion/complete: values capped at 100 with
// hasMore, reference checks, and the capability.
func TestCompletion(t *testing.T) {
	t.Parallel()
	var many []string
	for i := 0; i < 250; i++ {
		many = append(many, fmt.Sprintf("v%03d", i))
	}
	srv := newFixture(t, &core.ServerOptions{CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		if req.Params.Argument.Value == "none" {
			return &core.CompleteResult{}, nil
		}
		total := len(many)
		return &core.CompleteResult{Completion: core.Completion{Values: many, Total: &total}}, nil
	}})
	complete := func(ref map[string]any, value string) *resp {
		return mreq(1, "completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": "who", "value": value}}).do(t, srv)
	}
	r := complete(map[string]any{"type": "ref/prompt", "name": "greet"}, "v")
	res := r.result(t)
	vals := at(res, "completion", "values").([]any)
	if len(vals) != 100 || at(res, "completion", "hasMore") != true || str(vals[99]) != "v099" {
		t.Errorf("completion = %d values, hasMore %v", len(vals), at(res, "completion", "hasMore"))
	}
	if num(t, at(res, "completion", "total")) != 250 {
		t.Errorf("total = %v", at(res, "completion", "total"))
	}
	validateSpec(t, modernVersion, "CompleteResult", r.resultRaw(t))
	if has(res, "ttlMs") || has(res, "cacheScope") {
		t.Errorf("cache hint on completion/complete: %s", r.Body)
	}
	r = complete(map[string]any{"type": "ref/prompt", "name": "greet"}, "none")
	if vals, ok := at(r.result(t), "completion", "values").([]any); !ok || len(vals) != 0 {
		t.Errorf("values of an empty completion = %v, want []", at(r.result(t), "completion", "values"))
	}
	validateSpec(t, modernVersion, "CompleteResult", r.resultRaw(t))
	complete(map[string]any{"type": "ref/resource", "uri": "test://items/{id}"}, "v").result(t)
	complete(map[string]any{"type": "ref/prompt", "name": "nope"}, "v").wantError(t, 200, core.CodeInvalidParams)
	complete(map[string]any{"type": "ref/tool", "name": "add"}, "v").wantError(t, 200, core.CodeInvalidParams)
	complete(map[string]any{"type": "ref/resource"}, "v").wantError(t, 200, core.CodeInvalidParams)

	t.Run("no handler", func(t *testing.T) {
		s := core.NewServer(testImpl, nil)
		core.AddTool(s, &core.Tool{Name: "add"}, add)
		mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "x"},
			"argument": map[string]any{"name": "a", "value": ""}}).do(t, s).wantError(t, http.StatusNotFound, core.CodeMethodNotFound)
		if has(mreq(2, "server/discover", nil).do(t, s).result(t), "capabilities", "completions") {
			t.Error("completions advertised without a handler")
		}
	})
}

// TestHostilePromptArguments: a prompts/get with 100,000 distinct argument
// keys on a prompt that asks for input (whose arguments are canonicalized
// for its requestState binding) is refused with -32602 before any work;
// 10,000 keys (the limit) are served.
// The cost of canonicalization itself is bounded in TestCanonicalJSONCost.
func TestHostilePromptArguments(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	srv.AddPrompt(&core.Prompt{Name: "ask", Description: "Asks for a name."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return nil, core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("Name?", nameSchema)}, "")
		})
	r := rawArgs(t, "prompts/get", "ask", bigObject(100_000)).do(t, srv)
	e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
	if msg := str(e["message"]); !strings.Contains(msg, "more than 10000 members") {
		t.Fatalf("message %q", msg)
	}
	r = rawArgs(t, "prompts/get", "ask", bigObject(core.MaxArgumentMembers)).do(t, srv)
	if res := r.result(t); str(res["resultType"]) != "input_required" {
		t.Fatalf("10000 keys: %s", r.Body)
	}
	assertServes(t, newFixture(t, nil))
}
