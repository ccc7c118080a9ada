package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// roleFilter hides every feature whose name starts with "admin" from
// callers without the header X-Role: admin, and counts its calls.
func roleFilter(calls *atomic.Int64) func(context.Context, *core.Request, core.Feature) bool {
	return func(_ context.Context, r *core.Request, f core.Feature) bool {
		calls.Add(1)
		admin := strings.Contains(f.Name(), "admin")
		return !admin || r.Header.Get("X-Role") == "admin"
	}
}

// filteredServer has a visible and an admin-only feature of every kind,
// with tools/list and resources/read cached publicly by the hints.
func filteredServer(t *testing.T, calls *atomic.Int64) *core.Server {
	t.Helper()
	srv := core.NewServer(testImpl, &core.ServerOptions{
		Filter: roleFilter(calls),
		CacheHints: map[string]core.CacheHint{
			"tools/list":     {TTL: 60e9, Scope: core.CacheScopePublic},
			"resources/read": {TTL: 60e9, Scope: core.CacheScopePublic},
		},
		CompletionHandler: func(context.Context, *core.CompleteRequest) (*core.CompleteResult, error) {
			return &core.CompleteResult{Completion: core.Completion{Values: []string{"x"}}}, nil
		},
	})
	for _, n := range []string{"echo", "admin_purge"} {
		core.AddTool(srv, &core.Tool{Name: n}, add)
		srv.AddPrompt(&core.Prompt{Name: n}, func(context.Context, *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: &core.TextContent{Text: n}}}}, nil
		})
		srv.AddResource(&core.Resource{URI: "test://" + n, Name: n}, textResource(n))
	}
	// Two templates match test://files/admin-notes: the admin one first.
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://files/admin-{x}", Name: "admin_files"}, textResource("admin template"))
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://files/{x}", Name: "files"}, textResource("public template"))
	return srv
}

func textResource(text string) core.ResourceHandler {
	return func(_ context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: text}}}, nil
	}
}

func names(t *testing.T, res map[string]any, member, key string) []string {
	t.Helper()
	var out []string
	for _, it := range at(res, member).([]any) {
		out = append(out, str(at(it, key)))
	}
	return out
}

// TestFilterHidesPerCaller: ServerOptions.Filter decides per request what
// exists. Lists leave out what it hides, in both eras, and are never
// cached publicly; a direct use of a hidden feature answers exactly what an
// unknown one does; a resource URI a hidden template matches is read
// through the next visible one.
func TestFilterHidesPerCaller(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := filteredServer(t, &calls)
	admin := func(r *testReq) *testReq { return r.withHeader("X-Role", "admin") }

	lists := []struct{ method, member, key string }{
		{"tools/list", "tools", "name"}, {"prompts/list", "prompts", "name"},
		{"resources/list", "resources", "name"}, {"resources/templates/list", "resourceTemplates", "name"},
	}
	want := map[string][2][]string{ // user, admin
		"tools/list":               {{"echo"}, {"admin_purge", "echo"}},
		"prompts/list":             {{"echo"}, {"admin_purge", "echo"}},
		"resources/list":           {{"echo"}, {"echo", "admin_purge"}},
		"resources/templates/list": {{"files"}, {"admin_files", "files"}},
	}
	for _, l := range lists {
		user := mreq(1, l.method, nil).do(t, srv).result(t)
		adm := admin(mreq(1, l.method, nil)).do(t, srv).result(t)
		if got := names(t, user, l.member, l.key); !reflect.DeepEqual(got, want[l.method][0]) {
			t.Errorf("%s for a user: %v, want %v", l.method, got, want[l.method][0])
		}
		if got := names(t, adm, l.member, l.key); !reflect.DeepEqual(got, want[l.method][1]) {
			t.Errorf("%s for an admin: %v, want %v", l.method, got, want[l.method][1])
		}
		// A per-caller list is never public, whatever the hints say.
		if str(user["cacheScope"]) != "private" || str(adm["cacheScope"]) != "private" {
			t.Errorf("%s: cacheScope %v / %v, want private", l.method, user["cacheScope"], adm["cacheScope"])
		}
		// Legacy revisions list the same.
		sid := initialize(t, srv, "2025-11-25", nil, nil)
		leg := lreq(2, l.method, nil, "2025-11-25", sid).do(t, srv).result(t)
		if got := names(t, leg, l.member, l.key); !reflect.DeepEqual(got, want[l.method][0]) {
			t.Errorf("legacy %s for a user: %v, want %v", l.method, got, want[l.method][0])
		}
	}
	if r := mreq(1, "resources/read", map[string]any{"uri": "test://echo"}).do(t, srv).result(t); str(r["cacheScope"]) != "private" {
		t.Errorf("resources/read cacheScope %v, want private", r["cacheScope"])
	}

	// A hidden feature answers, byte for byte but for the name it echoes,
	// what an unknown one answers.
	same := func(what string, hidden, unknown *testReq, name, other string) {
		t.Helper()
		h := hidden.do(t, srv)
		u := unknown.do(t, srv)
		hb := strings.ReplaceAll(string(h.finalRaw(t)), name, "NAME")
		ub := strings.ReplaceAll(string(u.finalRaw(t)), other, "NAME")
		if h.Status != u.Status || hb != ub {
			t.Errorf("%s: hidden answered %d %s, unknown %d %s", what, h.Status, h.finalRaw(t), u.Status, u.finalRaw(t))
		}
		if a := admin(hidden).do(t, srv); a.Status != 200 || has(a.final(t), "error") {
			t.Errorf("%s for an admin: %d %s", what, a.Status, a.finalRaw(t))
		}
	}
	same("tools/call", callReq(1, "admin_purge", map[string]any{"a": 1, "b": 2}), callReq(1, "admin_nopee", map[string]any{"a": 1, "b": 2}), "admin_purge", "admin_nopee")
	same("prompts/get", mreq(1, "prompts/get", map[string]any{"name": "admin_purge"}), mreq(1, "prompts/get", map[string]any{"name": "admin_nopee"}), "admin_purge", "admin_nopee")
	same("resources/read", mreq(1, "resources/read", map[string]any{"uri": "test://admin_purge"}), mreq(1, "resources/read", map[string]any{"uri": "test://admin_nopee"}), "admin_purge", "admin_nopee")
	same("completion/complete", mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "admin_purge"}, "argument": map[string]any{"name": "a", "value": ""}}),
		mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "admin_nopee"}, "argument": map[string]any{"name": "a", "value": ""}}), "admin_purge", "admin_nopee")

	// The admin template is hidden: the URI it would match is read through
	// the public one.
	read := func(r *testReq) string { return str(at(r.do(t, srv).result(t), "contents", 0, "text")) }
	if got := read(mreq(1, "resources/read", map[string]any{"uri": "test://files/admin-notes"})); got != "public template" {
		t.Errorf("a user's read through templates: %q, want the public template", got)
	}
	if got := read(admin(mreq(1, "resources/read", map[string]any{"uri": "test://files/admin-notes"}))); got != "admin template" {
		t.Errorf("an admin's read through templates: %q, want the admin template", got)
	}
	if calls.Load() == 0 {
		t.Fatal("the filter never ran")
	}
}

// TestFilterCost: the filter runs once per registered feature of the list
// asked for, whatever the page size, and an unfiltered server lists
// without allocating a filtered copy.
func TestFilterCost(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := core.NewServer(testImpl, &core.ServerOptions{Filter: roleFilter(&calls), PageSize: 10})
	for i := range 50 {
		core.AddTool(srv, &core.Tool{Name: fmt.Sprintf("t%02d", i)}, add)
	}
	calls.Store(0)
	res := mreq(1, "tools/list", nil).do(t, srv).result(t)
	if n := len(at(res, "tools").([]any)); n != 10 {
		t.Fatalf("%d tools on the first page, want 10", n)
	}
	if n := calls.Load(); n != 50 {
		t.Errorf("the filter ran %d times for one list of 50 tools, want 50", n)
	}
}

// TestMixedTypedAndAdvancedTools: typed tools and ListToolsHandler on one
// server. tools/list walks the typed tools' pages, then the handler's (its
// cursors wrapped and unwrapped on the way); a call finds either; a listed
// tool named like a typed tool is left out and the typed one is called;
// the filter applies to both.
func TestMixedTypedAndAdvancedTools(t *testing.T) {
	t.Parallel()
	var filterCalls atomic.Int64
	var gotCursors []string
	var srv *core.Server
	pages := [][]*core.Tool{
		{{Name: "dyn_a", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "typed_b"}},
		{{Name: "dyn_c"}, {Name: "admin_dyn"}},
	}
	srv = core.NewServer(testImpl, &core.ServerOptions{
		PageSize: 1,
		Filter:   roleFilter(&filterCalls),
		ListToolsHandler: func(_ context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			gotCursors = append(gotCursors, fmt.Sprintf("%v:%s", req.HasCursor, req.Cursor))
			if !req.HasCursor {
				next := "page2"
				return &core.ListToolsResult{Tools: pages[0], NextCursor: &next}, nil
			}
			if req.Cursor != "page2" {
				return nil, core.InvalidParamsError("Invalid params: invalid cursor")
			}
			return &core.ListToolsResult{Tools: pages[1]}, nil
		},
		CallToolHandler: func(_ context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "handler:" + req.Params.Name}}}, nil
		},
	})
	core.AddTool(srv, &core.Tool{Name: "typed_a"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "typed:typed_a", nil })
	core.AddTool(srv, &core.Tool{Name: "typed_b"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "typed:typed_b", nil })

	var got []string
	p := map[string]any{}
	for page := 0; ; page++ {
		if page > 6 {
			t.Fatal("too many pages")
		}
		res := mreq(page, "tools/list", p).do(t, srv).result(t)
		got = append(got, names(t, res, "tools", "name")...)
		next, ok := res["nextCursor"].(string)
		if !ok {
			break
		}
		p = map[string]any{"cursor": next}
	}
	if want := []string{"typed_a", "typed_b", "dyn_a", "dyn_c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools/list walked %v, want %v", got, want)
	}
	if want := []string{"false:", "true:page2"}; !reflect.DeepEqual(gotCursors, want) {
		t.Errorf("the handler saw cursors %v, want %v", gotCursors, want)
	}
	for name, want := range map[string]string{"typed_a": "typed:typed_a", "typed_b": "typed:typed_b", "dyn_a": "handler:dyn_a", "dyn_c": "handler:dyn_c"} {
		if got := textOf(callReq(1, name, map[string]any{}).do(t, srv).result(t)); got != want {
			t.Errorf("tools/call %s: %q, want %q", name, got, want)
		}
	}
	// admin_dyn is listed by the handler and hidden by the filter: unknown
	// in 2026-07-28, and absent from an admin's list only without the role.
	callReq(1, "admin_dyn", map[string]any{}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	if got := textOf(callReq(1, "admin_dyn", map[string]any{}).withHeader("X-Role", "admin").do(t, srv).result(t)); got != "handler:admin_dyn" {
		t.Errorf("an admin's call of admin_dyn: %q", got)
	}
	// A forged handler cursor reaches the handler, which refuses it.
	forged := mreq(9, "tools/list", map[string]any{"cursor": "aDE6bm9wZQ"}).do(t, srv) // "h1:nope"
	forged.wantError(t, 200, core.CodeInvalidParams)
}
