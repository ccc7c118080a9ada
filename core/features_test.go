package core_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// TestResources checks resources/read of static resources and templates,
// and the errors for missing resources in both eras (2026-07-28
// server/resources).
func TestResources(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	srv.AddResource(&core.Resource{URI: "test://blob", Name: "blob", MIMEType: "image/png"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		})
	srv.AddResource(&core.Resource{URI: "test://nil", Name: "nil"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, nil
		})
	srv.AddResource(&core.Resource{URI: "test://fails", Name: "fails"},
		func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, fmt.Errorf("disk on fire at /var/secret")
		})
	vars := make(chan map[string]string, 10)
	tmpl := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		vars <- req.Vars
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "ok"}}}, nil
	}
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://files/{+path}", Name: "files"}, tmpl)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://users/{user}/posts/{post}", Name: "posts"}, tmpl)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://search{?q,lang}", Name: "search"}, tmpl)

	read := func(uri string) *resp { return mreq(1, "resources/read", map[string]any{"uri": uri}).do(t, srv) }
	readLegacy := func(uri string) *resp {
		return lreq(1, "resources/read", map[string]any{"uri": uri}, core.ProtocolVersion20251125, "").do(t, srv)
	}

	t.Run("static text", func(t *testing.T) {
		r := read("test://static")
		res := r.result(t)
		if str(at(res, "contents", 0, "text")) != "static text" || str(at(res, "contents", 0, "uri")) != "test://static" ||
			str(at(res, "contents", 0, "mimeType")) != "text/plain" {
			t.Errorf("contents: %s", r.Body)
		}
		validateSpec(t, modernVersion, "ReadResourceResult", r.resultRaw(t))
	})
	t.Run("static blob", func(t *testing.T) {
		r := read("test://blob")
		res := r.result(t)
		if str(at(res, "contents", 0, "blob")) != "iVBORw==" || has(at(res, "contents", 0), "text") {
			t.Errorf("contents: %s", r.Body)
		}
		validateSpec(t, modernVersion, "ReadResourceResult", r.resultRaw(t))
	})
	t.Run("template variables", func(t *testing.T) {
		for uri, want := range map[string]map[string]string{
			"test://items/42":               {"id": "42"},
			"test://items/%E2%9C%93":        {"id": "✓"},
			"test://files/a/b/c.txt":        {"path": "a/b/c.txt"},
			"test://users/ann/posts/7":      {"user": "ann", "post": "7"},
			"test://users/a%20b/posts/x":    {"user": "a b", "post": "x"},
			"test://search?q=go&lang=en":    {"q": "go", "lang": "en"},
			"test://search?lang=fr":         {"lang": "fr"},
			"test://files/with%20space.txt": {"path": "with space.txt"},
		} {
			r := read(uri)
			if strings.HasPrefix(uri, "test://items/") { // the fixture's handler
				if got := str(at(r.result(t), "contents", 0, "text")); got != "item "+want["id"] {
					t.Errorf("%s: text %q", uri, got)
				}
				continue
			}
			r.result(t)
			select {
			case got := <-vars:
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: vars = %v, want %v", uri, got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: the template handler did not run", uri)
			}
		}
	})
	t.Run("not found modern", func(t *testing.T) {
		for _, uri := range []string{"test://nonexistent", "test://items/missing", "test://users/x"} {
			r := read(uri)
			e := r.wantError(t, 200, core.CodeInvalidParams)
			if got := str(at(e, "data", "uri")); got != uri {
				t.Errorf("%s: data.uri = %q", uri, got)
			}
			validateSpec(t, modernVersion, "JSONRPCErrorResponse", r.finalRaw(t))
		}
	})
	t.Run("not found legacy", func(t *testing.T) {
		for _, uri := range []string{"test://nonexistent", "test://items/missing"} {
			e := readLegacy(uri).wantError(t, 200, core.CodeResourceNotFound)
			if got := str(at(e, "data", "uri")); got != uri {
				t.Errorf("%s: data.uri = %q", uri, got)
			}
		}
	})
	t.Run("empty contents is an error", func(t *testing.T) {
		for _, uri := range []string{"test://items/empty", "test://nil"} {
			r := read(uri)
			if has(r.final(t), "result") {
				t.Fatalf("%s: a result for empty contents: %s", uri, r.Body)
			}
			r.wantError(t, 200, core.CodeInvalidParams)
			readLegacy(uri).wantError(t, 200, core.CodeResourceNotFound)
		}
	})
	t.Run("handler failure", func(t *testing.T) {
		r := read("test://fails")
		r.wantError(t, 200, core.CodeInternalError)
		if strings.Contains(string(r.Body), "secret") {
			t.Errorf("internal detail leaked: %s", r.Body)
		}
	})
	t.Run("bad uri", func(t *testing.T) {
		mreq(1, "resources/read", map[string]any{"uri": "relative/path"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
		mreq(1, "resources/read", map[string]any{"uri": ""}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	})
	t.Run("lists", func(t *testing.T) {
		r := mreq(1, "resources/list", nil).do(t, srv)
		validateSpec(t, modernVersion, "ListResourcesResult", r.resultRaw(t))
		var uris []string
		for _, x := range at(r.result(t), "resources").([]any) {
			uris = append(uris, str(at(x, "uri")))
		}
		// Listed in registration order.
		if want := []string{"test://static", "test://blob", "test://nil", "test://fails"}; !reflect.DeepEqual(uris, want) {
			t.Errorf("resources = %v, want %v", uris, want)
		}
		rt := mreq(2, "resources/templates/list", nil).do(t, srv)
		validateSpec(t, modernVersion, "ListResourceTemplatesResult", rt.resultRaw(t))
		if n := len(at(rt.result(t), "resourceTemplates").([]any)); n != 4 {
			t.Errorf("%d templates, want 4", n)
		}
	})
	t.Run("invalid definitions panic", func(t *testing.T) {
		s := core.NewServer(testImpl, nil)
		h := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, nil
		}
		for _, f := range []func(){
			func() { s.AddResource(&core.Resource{URI: "relative", Name: "r"}, h) },
			func() { s.AddResource(&core.Resource{URI: "test://x"}, h) },
			func() { s.AddResource(nil, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{unclosed", Name: "t"}, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{}", Name: "t"}, h) },
			func() { s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{a}", Name: ""}, h) },
		} {
			mustPanic(t, f)
		}
	})
}

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

// TestPagination walks every list method with PageSize 2: cursors round
// trip, every item appears once and in order, and a forged cursor is -32602
// (2026-07-28 server/utilities/pagination).
func TestPagination(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, &core.ServerOptions{PageSize: 2})
	h := func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
		return nil, nil
	}
	ph := func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) { return nil, nil }
	var want []string
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("item%d", i)
		want = append(want, n)
		core.AddTool(srv, &core.Tool{Name: n}, add)
		srv.AddPrompt(&core.Prompt{Name: n}, ph)
		srv.AddResource(&core.Resource{URI: "test://" + n, Name: n}, h)
		srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://" + n + "/{x}", Name: n}, h)
	}
	for _, c := range []struct{ method, member string }{
		{"tools/list", "tools"}, {"prompts/list", "prompts"},
		{"resources/list", "resources"}, {"resources/templates/list", "resourceTemplates"},
	} {
		t.Run(c.method, func(t *testing.T) {
			var got []string
			var cursors []string
			p := map[string]any{}
			for page := 0; ; page++ {
				if page > 5 {
					t.Fatal("too many pages")
				}
				r := mreq(page, c.method, p).do(t, srv)
				res := r.result(t)
				items := at(res, c.member).([]any)
				if len(items) > 2 {
					t.Errorf("page of %d items, want at most 2", len(items))
				}
				for _, it := range items {
					got = append(got, str(at(it, "name")))
				}
				if str(res["cacheScope"]) != "private" {
					t.Errorf("page %d: cacheScope %v", page, res["cacheScope"])
				}
				next, ok := res["nextCursor"].(string)
				if !ok {
					if has(res, "nextCursor") {
						t.Errorf("nextCursor present but not a string: %v", res["nextCursor"])
					}
					break
				}
				if next == "" {
					t.Errorf("empty nextCursor")
				}
				cursors = append(cursors, next)
				p = map[string]any{"cursor": next}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("items = %v, want %v", got, want)
			}
			if len(cursors) != 2 {
				t.Errorf("%d cursors, want 2", len(cursors))
			}
			// A cursor can be replayed and gives the same page.
			a := mreq(1, c.method, map[string]any{"cursor": cursors[0]}).do(t, srv).result(t)
			b := mreq(2, c.method, map[string]any{"cursor": cursors[0]}).do(t, srv).result(t)
			if !reflect.DeepEqual(a[c.member], b[c.member]) {
				t.Errorf("replayed cursor gave another page")
			}
			for _, bad := range []string{"", "garbage!", "Zm9v", "c1:item1"} {
				mreq(1, c.method, map[string]any{"cursor": bad}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
			}
			// Legacy pages the same way.
			lr := lreq(1, c.method, map[string]any{"cursor": cursors[1]}, core.ProtocolVersion20251125, "").do(t, srv).result(t)
			if n := len(at(lr, c.member).([]any)); n != 1 {
				t.Errorf("legacy last page: %d items, want 1", n)
			}
		})
	}
}

var cacheable = []struct{ method, def string }{
	{"server/discover", "DiscoverResult"},
	{"tools/list", "ListToolsResult"},
	{"prompts/list", "ListPromptsResult"},
	{"resources/list", "ListResourcesResult"},
	{"resources/templates/list", "ListResourceTemplatesResult"},
	{"resources/read", "ReadResourceResult"},
}

func cacheableReq(method string) *testReq {
	var p map[string]any
	if method == "resources/read" {
		p = map[string]any{"uri": "test://static"}
	}
	return mreq("c", method, p)
}

// TestCacheHints checks ttlMs and cacheScope: defaults, configured values,
// where they must not appear, and option validation (2026-07-28
// server/utilities/caching).
func TestCacheHints(t *testing.T) {
	t.Parallel()
	t.Run("defaults", func(t *testing.T) {
		srv := newFixture(t, nil)
		for _, c := range cacheable {
			r := cacheableReq(c.method).do(t, srv)
			res := r.result(t)
			if num(t, res["ttlMs"]) != 0 || str(res["cacheScope"]) != "private" {
				t.Errorf("%s: ttlMs %v cacheScope %v, want 0 private", c.method, res["ttlMs"], res["cacheScope"])
			}
			validateSpec(t, modernVersion, c.def, r.resultRaw(t))
		}
	})
	t.Run("configured", func(t *testing.T) {
		hints := map[string]core.CacheHint{}
		want := map[string][2]any{}
		for i, c := range cacheable {
			scope := core.CacheScopePublic
			if i%2 == 0 {
				scope = core.CacheScopePrivate
			}
			hints[c.method] = core.CacheHint{TTL: time.Duration(i+1) * 1500 * time.Millisecond, Scope: scope}
			want[c.method] = [2]any{int64(i+1) * 1500, string(scope)}
		}
		hints["server/discover"] = core.CacheHint{TTL: time.Minute} // empty scope: private
		want["server/discover"] = [2]any{int64(60000), "private"}
		srv := newFixture(t, &core.ServerOptions{CacheHints: hints})
		for _, c := range cacheable {
			res := cacheableReq(c.method).do(t, srv).result(t)
			if got := [2]any{num(t, res["ttlMs"]), str(res["cacheScope"])}; got != want[c.method] {
				t.Errorf("%s: hint %v, want %v", c.method, got, want[c.method])
			}
		}
		// Never on tools/call, prompts/get, completion/complete or
		// input_required results, nor on legacy results.
		for _, r := range []*resp{
			callReq(1, "add", map[string]any{"a": 1, "b": 1}).do(t, srv),
			mreq(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}).do(t, srv),
			mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": ""}}).do(t, srv),
			lreq(1, "tools/list", nil, core.ProtocolVersion20251125, "").do(t, srv),
			lreq(1, "resources/read", map[string]any{"uri": "test://static"}, core.ProtocolVersion20250618, "").do(t, srv),
		} {
			res := r.result(t)
			if has(res, "ttlMs") || has(res, "cacheScope") {
				t.Errorf("cache hint on a result that must not carry one: %s", r.Body)
			}
		}
	})
	t.Run("never on input_required", func(t *testing.T) {
		srv := core.NewServer(testImpl, &core.ServerOptions{CacheHints: map[string]core.CacheHint{"resources/read": {TTL: time.Hour, Scope: core.CacheScopePublic}}})
		srv.AddResource(&core.Resource{URI: "test://ask", Name: "ask"}, func(ctx context.Context, req *core.ReadResourceRequest) (*core.ReadResourceResult, error) {
			return nil, core.InputRequired(core.InputRequests{"ok": confirmForm("Read it?")}, "")
		})
		r := mreq(1, "resources/read", map[string]any{"uri": "test://ask"}).withCaps(map[string]any{"elicitation": map[string]any{}}).do(t, srv)
		res := r.result(t)
		if str(res["resultType"]) != "input_required" {
			t.Fatalf("resultType = %v", res["resultType"])
		}
		if has(res, "ttlMs") || has(res, "cacheScope") {
			t.Errorf("cache hint on input_required: %s", r.Body)
		}
		validateSpec(t, modernVersion, "InputRequiredResult", r.resultRaw(t))
	})
	t.Run("Validate", func(t *testing.T) {
		bad := []map[string]core.CacheHint{
			{"tools/list": {TTL: -time.Second}},
			{"tools/call": {TTL: time.Second}},
			{"prompts/get": {}},
			{"completion/complete": {}},
			{"subscriptions/listen": {}},
			{"tools/list": {Scope: "shared"}},
			{"resources/read": {Scope: "Public"}},
		}
		for _, h := range bad {
			o := &core.ServerOptions{CacheHints: h}
			if o.Validate() == nil {
				t.Errorf("Validate accepted %v", h)
			}
			mustPanic(t, func() { core.NewServer(testImpl, o) })
		}
		ok := &core.ServerOptions{CacheHints: map[string]core.CacheHint{"tools/list": {TTL: 0, Scope: core.CacheScopePublic}, "resources/read": {TTL: time.Hour}}}
		if err := ok.Validate(); err != nil {
			t.Errorf("Validate rejected valid hints: %v", err)
		}
		var nilOpts *core.ServerOptions
		if nilOpts.Validate() != nil {
			t.Error("nil options invalid")
		}
		for _, o := range []*core.ServerOptions{
			{PageSize: -1}, {MaxRequestBytes: -1}, {StateTTL: -time.Second}, {Mode: 7}, {Sessions: 9},
			{SessionIdleTimeout: -1}, {BridgeTimeout: -1}, {MaxInputRounds: -1},
		} {
			if o.Validate() == nil {
				t.Errorf("Validate accepted %+v", o)
			}
		}
	})
}
