package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

const extSearch = "com.example/search"

type searchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// extServer is a server of one vendor extension with two methods:
// search/query (Mcp-Name mirrors params.query) answers with the query, the
// limit and the settings the client declared; search/modern is of
// 2026-07-28 only.
func extServer(t *testing.T) (*core.Server, http.Handler) {
	t.Helper()
	s := core.NewServer(testImpl, nil)
	s.AddExtension(core.Extension{ID: extSearch, Settings: map[string]any{"maxLimit": 50, "engines": []string{"web"}}})
	s.AddMethod(extSearch, "search/query", core.MethodFunc(func(ctx context.Context, r *core.Request, p searchParams) (map[string]any, error) {
		if p.Query == "" {
			return nil, core.InvalidParamsError("Invalid params: query is required")
		}
		settings, ok := r.Extension(extSearch)
		settings["changed"] = true // the handler's own copy
		return map[string]any{"query": p.Query, "limit": p.Limit, "declared": ok, "settings": settings,
			"_meta": map[string]any{"com.example/took": 3}}, nil
	}), &core.MethodOptions{NameParam: "query"})
	s.AddMethod(extSearch, "search/modern", func(ctx context.Context, r *core.Request, _ json.RawMessage) (any, error) {
		return nil, nil
	}, &core.MethodOptions{ModernOnly: true})
	return s, s
}

func declaring(settings map[string]any) map[string]any {
	return map[string]any{"extensions": map[string]any{extSearch: settings}}
}

func searchReq(id any, query string) *testReq {
	return mreq(id, "search/query", map[string]any{"query": query, "limit": 5}).withHeader(core.HeaderName, query)
}

// TestExtensionAdvertised: the extension and its settings are in the
// capabilities of server/discover and of initialize; the Tasks extension,
// registered the same way, is advertised only while a tool may run as a
// task, and in server/discover only.
func TestExtensionAdvertised(t *testing.T) {
	s, h := extServer(t)
	want := map[string]any{"maxLimit": json.Number("50"), "engines": []any{"web"}}
	res := mreq(1, "server/discover", nil).do(t, h).result(t)
	if got := at(res, "capabilities", "extensions"); !reflect.DeepEqual(got, map[string]any{extSearch: want}) {
		t.Errorf("server/discover extensions = %v", got)
	}
	ir := lreq(0, "initialize", map[string]any{"protocolVersion": core.ProtocolVersion20251125, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, h).result(t)
	if got := at(ir, "capabilities", "extensions"); !reflect.DeepEqual(got, map[string]any{extSearch: want}) {
		t.Errorf("initialize extensions = %v", got)
	}

	core.AddTool(s, &core.Tool{Name: "slow"}, func(ctx context.Context, req *core.CallToolRequest, in struct{}) (string, error) {
		return "done", nil
	}, &core.ToolOptions{TaskSupport: core.TaskOptional})
	res = mreq(2, "server/discover", nil).do(t, h).result(t)
	if got := keys(at(res, "capabilities", "extensions")); !reflect.DeepEqual(got, []string{extSearch, core.ExtensionTasks}) {
		t.Errorf("with a task tool, server/discover extensions = %v", got)
	}
	ir = lreq(0, "initialize", map[string]any{"protocolVersion": core.ProtocolVersion20251125, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, h).result(t)
	if got := keys(at(ir, "capabilities", "extensions")); !reflect.DeepEqual(got, []string{extSearch}) {
		t.Errorf("initialize extensions = %v, want the vendor extension only (tasks are of 2026-07-28)", got)
	}
}

// TestExtensionMethodModern: a 2026-07-28 request of a vendor method is
// routed with Mcp-Method and Mcp-Name like a built-in method, gated on the
// declared extension, and its result gets the era's members.
func TestExtensionMethodModern(t *testing.T) {
	_, h := extServer(t)
	res := searchReq(1, "mcp go").withCaps(declaring(map[string]any{"lang": "en"})).do(t, h).result(t)
	if at(res, "query") != "mcp go" || num(t, at(res, "limit")) != 5 || at(res, "declared") != true {
		t.Errorf("result = %v", res)
	}
	if got := at(res, "settings"); !reflect.DeepEqual(got, map[string]any{"lang": "en", "changed": true}) {
		t.Errorf("settings = %v", got)
	}
	if at(res, "resultType") != "complete" || at(res, "_meta", core.MetaServerInfo, "name") != testImpl.Name ||
		num(t, at(res, "_meta", "com.example/took")) != 3 {
		t.Errorf("result members = %v", res)
	}
	// The handler's change to its settings stays its own: the same
	// capabilities again (the server caches them) give the declared ones.
	res = searchReq(2, "again").withCaps(declaring(map[string]any{"lang": "en"})).do(t, h).result(t)
	if got := at(res, "settings"); !reflect.DeepEqual(got, map[string]any{"lang": "en", "changed": true}) {
		t.Errorf("second settings = %v", got)
	}
	// Declared with null settings: declared, settings {}.
	res = searchReq(3, "null").withCaps(declaring(nil)).do(t, h).result(t)
	if at(res, "declared") != true {
		t.Errorf("null settings: %v", res)
	}

	t.Run("undeclared", func(t *testing.T) {
		e := searchReq(4, "x").do(t, h).wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
		if !has(e, "data", "requiredCapabilities", "extensions", extSearch) {
			t.Errorf("data = %v", e["data"])
		}
		// Another extension declared is not this one.
		searchReq(5, "x").withCaps(map[string]any{"extensions": map[string]any{"com.example/other": map[string]any{}}}).
			do(t, h).wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
	})
	t.Run("unknown method", func(t *testing.T) {
		mreq(6, "search/nope", nil).withCaps(declaring(map[string]any{})).do(t, h).wantError(t, http.StatusNotFound, core.CodeMethodNotFound)
	})
	t.Run("bad params", func(t *testing.T) {
		mreq(7, "search/query", map[string]any{"query": 42}).withHeader(core.HeaderName, "42").withCaps(declaring(map[string]any{})).
			do(t, h).wantError(t, http.StatusOK, core.CodeInvalidParams)
		mreq(8, "search/query", map[string]any{"limit": 1}).withHeader(core.HeaderName, "x").withCaps(declaring(map[string]any{})).
			do(t, h).wantError(t, http.StatusOK, core.CodeInvalidParams)
	})
	t.Run("Mcp-Name", func(t *testing.T) {
		r := mreq(9, "search/query", map[string]any{"query": "q"}).withCaps(declaring(map[string]any{}))
		r.do(t, h).wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
		r.withHeader(core.HeaderName, "other").do(t, h).wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
		// A method without NameParam needs none.
		mreq(10, "search/modern", nil).withCaps(declaring(map[string]any{})).do(t, h).result(t)
	})
	t.Run("Mcp-Method", func(t *testing.T) {
		searchReq(11, "q").withCaps(declaring(map[string]any{})).withHeader(core.HeaderMethod, "tools/list").
			do(t, h).wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
	})
}

// TestExtensionMethodLegacy: in a legacy session the extension is declared
// in initialize; a sessionless or non-declaring session gets -32021, and a
// method of 2026-07-28 only is not found.
func TestExtensionMethodLegacy(t *testing.T) {
	_, h := extServer(t)
	v := core.ProtocolVersion20251125
	sid := initialize(t, h, v, declaring(map[string]any{"lang": "fr"}), nil)
	res := lreq(1, "search/query", map[string]any{"query": "q", "limit": 2}, v, sid).do(t, h).result(t)
	if at(res, "query") != "q" || at(res, "settings", "lang") != "fr" || has(res, "resultType") {
		t.Errorf("legacy result = %v", res)
	}
	if num(t, at(res, "_meta", "com.example/took")) != 3 {
		t.Errorf("legacy _meta = %v", at(res, "_meta"))
	}
	lreq(2, "search/modern", nil, v, sid).do(t, h).wantError(t, http.StatusOK, core.CodeMethodNotFound)
	lreq(3, "search/nope", nil, v, sid).do(t, h).wantError(t, http.StatusOK, core.CodeMethodNotFound)
	lreq(4, "search/query", map[string]any{"query": 1}, v, sid).do(t, h).wantError(t, http.StatusOK, core.CodeInvalidParams)

	plain := initialize(t, h, v, nil, nil)
	lreq(5, "search/query", map[string]any{"query": "q"}, v, plain).do(t, h).wantError(t, http.StatusOK, core.CodeMissingRequiredClientCapability)
}

// TestExtensionRegistration: registration errors are programming errors.
func TestExtensionRegistration(t *testing.T) {
	s := core.NewServer(testImpl, nil)
	noop := func(context.Context, *core.Request, json.RawMessage) (any, error) { return nil, nil }
	for name, f := range map[string]func(){
		"bad id":         func() { s.AddExtension(core.Extension{ID: "search"}) },
		"space in id":    func() { s.AddExtension(core.Extension{ID: "com.example/a b"}) },
		"tasks":          func() { s.AddExtension(core.Extension{ID: core.ExtensionTasks}) },
		"settings":       func() { s.AddExtension(core.Extension{ID: extSearch, Settings: map[string]any{"f": func() {}}}) },
		"core method":    func() { s.AddMethod(extSearch, "tools/list", noop, nil) },
		"legacy method":  func() { s.AddMethod(extSearch, "ping", noop, nil) },
		"tasks method":   func() { s.AddMethod(core.ExtensionTasks, "tasks/get", noop, nil) },
		"notification":   func() { s.AddMethod(extSearch, "notifications/search", noop, nil) },
		"nil handler":    func() { s.AddMethod(extSearch, "search/x", nil, nil) },
		"other ext owns": func() { s.AddMethod(extSearch, "a/b", noop, nil); s.AddMethod("com.example/other", "a/b", noop, nil) },
	} {
		if msg := mustPanic(t, f); !strings.HasPrefix(msg, "core: ") {
			t.Errorf("%s: panic %q", name, msg)
		}
	}
}

// TestExtensionResultErrors: a result that is not an object is the
// server's fault (-32603).
func TestExtensionResultErrors(t *testing.T) {
	s := core.NewServer(testImpl, &core.ServerOptions{DisableRequestLog: true})
	s.AddMethod(extSearch, "search/list", func(context.Context, *core.Request, json.RawMessage) (any, error) {
		return []string{"a"}, nil
	}, nil)
	mreq(1, "search/list", nil).withCaps(declaring(map[string]any{})).do(t, s).wantError(t, http.StatusOK, core.CodeInternalError)
}
