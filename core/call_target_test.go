package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// foundSeen is what a middleware saw of Call.Served and Call.TargetFound,
// before it called next and once next had returned.
type foundSeen struct {
	method, target        string
	served, before, after bool
}

func (f foundSeen) String() string {
	return fmt.Sprintf("%s %q served=%v found=%v/%v", f.method, f.target, f.served, f.before, f.after)
}

type foundObserver struct {
	mu   sync.Mutex
	seen []foundSeen
}

func (o *foundObserver) middleware(next core.Handler) core.Handler {
	return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
		f := foundSeen{method: c.Method, target: c.Target, served: c.Served(), before: c.TargetFound()}
		out, err := next(ctx, c)
		f.after = c.TargetFound()
		o.mu.Lock()
		o.seen = append(o.seen, f)
		o.mu.Unlock()
		return out, err
	}
}

func (o *foundObserver) last(t *testing.T) foundSeen {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		t.Fatal("the middleware saw no round")
	}
	f := o.seen[len(o.seen)-1]
	o.seen = nil
	return f
}

// TestCallTargetFound: Call.TargetFound tells a middleware whether the
// server has the request's target (a registered tool served in the era, a
// prompt, a resource or a template's URI, a completion ref), before next
// runs and after; for a tool only ListToolsHandler lists, once next has
// returned. Call.Served tells whether the method is served: a legacy
// method the server does not know reaches the chain with Served false.
func TestCallTargetFound(t *testing.T) {
	t.Parallel()
	var o foundObserver
	srv := newFixture(t, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{o.middleware}})
	core.AddSessionTool(srv, &core.Tool{Name: "session_only"}, func(ctx context.Context, req *core.CallToolRequest, s *core.Session, _ noArgs) (string, error) {
		return "ok", nil
	})
	complete := func(ref map[string]any) *testReq {
		return mreq(1, "completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": "who", "value": "a"}})
	}
	for _, tc := range []struct {
		req   *testReq
		found bool
	}{
		{callReq(1, "add", map[string]any{"a": 1, "b": 2}), true},
		{callReq(1, "add", map[string]any{"a": "x"}), true}, // refused arguments: still the server's tool
		{callReq(1, "nope", nil), false},
		// Served to legacy sessions only: unknown in 2026-07-28.
		{callReq(1, "session_only", nil), false},
		{mreq(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}), true},
		{mreq(1, "prompts/get", map[string]any{"name": "nope"}), false},
		{mreq(1, "resources/read", map[string]any{"uri": "test://static"}), true},
		{mreq(1, "resources/read", map[string]any{"uri": "test://items/7"}), true},
		{mreq(1, "resources/read", map[string]any{"uri": "test://nothing"}), false},
		{complete(map[string]any{"type": "ref/prompt", "name": "greet"}), true},
		{complete(map[string]any{"type": "ref/prompt", "name": "nope"}), false},
		{complete(map[string]any{"type": "ref/resource", "uri": "test://items/{id}"}), true},
		{complete(map[string]any{"type": "ref/resource", "uri": "test://other/{id}"}), false},
		{mreq(1, "tools/list", nil), false}, // no target
	} {
		tc.req.do(t, srv)
		f := o.last(t)
		if !f.served || f.before != tc.found || f.after != tc.found {
			t.Errorf("%v, want served, found=%v before and after next", f, tc.found)
		}
	}

	sid := initialize(t, srv, legacyVersion, nil, nil)
	lreq(1, "x/invented", nil, legacyVersion, sid).do(t, srv).wantError(t, 200, core.CodeMethodNotFound)
	if f := o.last(t); f.served || f.before || f.after {
		t.Errorf("an unknown legacy method: %v, want not served, no target", f)
	}
	lreq(1, "tools/call", map[string]any{"name": "session_only"}, legacyVersion, sid).do(t, srv).result(t)
	if f := o.last(t); !f.served || !f.before || !f.after {
		t.Errorf("a session tool in its session: %v, want served and found", f)
	}

	// Advanced mode: the list handler's tools are found by the call.
	var ao foundObserver
	adv := core.NewServer(testImpl, &core.ServerOptions{
		Logger: discard, Middleware: []core.Middleware{ao.middleware},
		ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			return &core.ListToolsResult{Tools: []*core.Tool{{Name: "listed", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
		},
		CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "ran " + req.Params.Name}}}, nil
		},
	})
	callReq(1, "listed", nil).do(t, adv).result(t)
	if f := ao.last(t); !f.served || f.before || !f.after {
		t.Errorf("advanced mode, a listed tool: %v, want found once next has returned", f)
	}
	callReq(1, "unlisted", nil).do(t, adv)
	if f := ao.last(t); f.before || f.after {
		t.Errorf("advanced mode, an unlisted tool: %v, want not found", f)
	}
	// A legacy call of an unlisted tool reaches CallToolHandler, which may
	// serve any name: the server does not have it.
	asid := initialize(t, adv, legacyVersion, nil, nil)
	lreq(1, "tools/call", map[string]any{"name": "unlisted"}, legacyVersion, asid).do(t, adv).result(t)
	if f := ao.last(t); f.before || f.after {
		t.Errorf("advanced mode, a legacy call of an unlisted tool: %v, want not found", f)
	}
}
