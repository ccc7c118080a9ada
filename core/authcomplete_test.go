package core_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// TestAuthorizeCompletion: completion/complete is a targeted operation. It
// is authorized with its reference (the prompt's name, or the resource
// template's URI, and Ref saying which) and the argument being completed,
// after the reference is checked and before the handler runs; in a
// 2025-03-26 batch too.
func TestAuthorizeCompletion(t *testing.T) {
	t.Parallel()
	a := &recordingAuth{deny: map[string]bool{"secret": true, "file:///private/{id}": true}}
	var ran atomic.Int64
	srv := authServer(t, a, &core.ServerOptions{CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		ran.Add(1)
		return &core.CompleteResult{Completion: core.Completion{Values: []string{"x"}}}, nil
	}})
	srv.AddPrompt(&core.Prompt{Name: "secret"}, func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{}, nil
	})
	complete := func(ref map[string]any) *testReq {
		return withToken(mreq(1, "completion/complete", map[string]any{"ref": ref,
			"argument": map[string]any{"name": "topic", "value": "ab"}}), "alice")
	}
	cases := []struct {
		ref  map[string]any
		want core.Operation
	}{
		{map[string]any{"type": "ref/prompt", "name": "p"},
			core.Operation{Method: "completion/complete", Name: "p", Ref: "ref/prompt", Arguments: []byte(`{"name":"topic","value":"ab"}`)}},
		{map[string]any{"type": "ref/resource", "uri": "file:///r/{x}"},
			core.Operation{Method: "completion/complete", Name: "file:///r/{x}", Ref: "ref/resource", Arguments: []byte(`{"name":"topic","value":"ab"}`)}},
	}
	for _, c := range cases {
		a.reset()
		complete(c.ref).do(t, srv).result(t)
		a.mu.Lock()
		ops := append([]core.Operation(nil), a.ops...)
		a.mu.Unlock()
		if len(ops) != 1 {
			t.Fatalf("%v: Authorize called %d times: %+v", c.ref, len(ops), ops)
		}
		got := ops[0]
		if got.Method != c.want.Method || got.Name != c.want.Name || got.Ref != c.want.Ref || string(got.Arguments) != string(c.want.Arguments) ||
			got.ProtocolVersion != modernVersion {
			t.Fatalf("operation %+v (args %s), want %+v (args %s)", got, got.Arguments, c.want, c.want.Arguments)
		}
	}
	ran.Store(0)
	// A refused prompt or template: 403 with the authenticator's challenge,
	// and the handler does not run.
	for _, ref := range []map[string]any{{"type": "ref/prompt", "name": "secret"}, {"type": "ref/resource", "uri": "file:///private/{id}"}} {
		r := complete(ref).do(t, srv)
		r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%v: no challenge: %v", ref, r.Header)
		}
	}
	// An unknown prompt is -32602 before any authorization.
	a.reset()
	complete(map[string]any{"type": "ref/prompt", "name": "nope"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	if ops := a.seen(); len(ops) != 1 { // the authentication only
		t.Fatalf("unknown prompt authorized: %v", ops)
	}
	// Keys are matched as the handler reads them (encoding/json: any case),
	// so a differently cased "Ref" cannot slip past the authorization.
	r := withToken(mreq(1, "completion/complete", map[string]any{"Ref": map[string]any{"type": "ref/prompt", "Name": "secret"},
		"argument": map[string]any{"name": "topic", "value": ""}}), "alice").do(t, srv)
	r.wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	// A 2025-03-26 batch is refused whole when one completion is refused.
	b := rawReq(`[{"jsonrpc":"2.0","id":1,"method":"ping"},
		{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"secret"},"argument":{"name":"topic","value":""}}}]`,
		map[string]string{core.HeaderProtocolVersion: core.ProtocolVersion20250326})
	withToken(b, "alice").do(t, srv).wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
	if n := ran.Load(); n != 0 {
		t.Fatalf("the completion handler ran %d times for refused references", n)
	}
}
