package core_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

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
