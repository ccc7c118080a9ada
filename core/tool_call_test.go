package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// TestToolDefinitionsValidate validates every tool definition the server
// lists (typed tools of many argument and result types, explicit schemas,
// x-mcp-header) against $defs/Tool of both revisions.
func TestToolDefinitionsValidate(t *testing.T) {
	t.Parallel()
	type nested struct {
		Street string `json:"street"`
		Zip    string `json:"zip,omitempty"`
	}
	type rich struct {
		S     string            `json:"s" jsonschema:"description=A string,minLength=1"`
		I     int64             `json:"i" jsonschema:"minimum=0,maximum=10"`
		F     float64           `json:"f,omitempty"`
		B     bool              `json:"b,omitempty"`
		E     string            `json:"e,omitempty" jsonschema:"enum=red,enum=green"`
		L     []string          `json:"l,omitempty"`
		M     map[string]int    `json:"m,omitempty"`
		N     nested            `json:"n"`
		P     *nested           `json:"p,omitempty"`
		T     time.Time         `json:"t,omitempty"`
		R     json.RawMessage   `json:"r,omitempty"`
		A     any               `json:"a,omitempty"`
		H     string            `json:"h,omitempty" jsonschema_extras:"x-mcp-header=Tenant"`
		Extra map[string]string `json:"extra,omitempty"`
	}
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "rich", Title: "Rich", Description: "Many types.",
		Annotations: &core.ToolAnnotations{Title: "Rich", ReadOnlyHint: ptr(true)},
		Icons:       []core.Icon{{Src: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"16x16"}, Theme: "dark"}},
		Meta:        core.Meta{"com.example/k": 1}},
		func(ctx context.Context, _ *core.CallToolRequest, in rich) (rich, error) { return in, nil })
	core.AddTool(srv, &core.Tool{Name: "slice_out"}, func(ctx context.Context, _ *core.CallToolRequest, in map[string]any) ([]nested, error) {
		return nil, nil
	})
	core.AddTool(srv, &core.Tool{Name: "string_out"}, func(ctx context.Context, _ *core.CallToolRequest, in struct{}) (string, error) { return "", nil })
	core.AddTool(srv, &core.Tool{Name: "explicit", InputSchema: map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"properties": map[string]any{"id": map[string]any{"type": "string", "x-mcp-header": "Id"}},
		"$defs":      map[string]any{"x": map[string]any{"type": "string"}},
		"oneOf":      []any{map[string]any{"required": []string{"id"}}},
	}, OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"integer"}}`)},
		func(ctx context.Context, _ *core.CallToolRequest, in map[string]any) ([]int, error) {
			return []int{1}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "draft07", InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`)},
		func(ctx context.Context, _ *core.CallToolRequest, in map[string]any) (*core.CallToolResult, error) {
			return &core.CallToolResult{}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "no_params", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)}, add)

	modern := mreq(1, "tools/list", nil).do(t, srv)
	legacy := lreq(1, "tools/list", nil, core.ProtocolVersion20251125, "").do(t, srv)
	validateSpec(t, modernVersion, "ListToolsResult", modern.resultRaw(t))
	validateSpec(t, core.ProtocolVersion20251125, "ListToolsResult", legacy.resultRaw(t))
	for _, c := range []struct {
		rev string
		r   *resp
	}{{modernVersion, modern}, {core.ProtocolVersion20251125, legacy}} {
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		json.Unmarshal(c.r.resultRaw(t), &res)
		if len(res.Tools) != 6 {
			t.Fatalf("%s: %d tools, want 6", c.rev, len(res.Tools))
		}
		for _, tj := range res.Tools {
			validateSpec(t, c.rev, "Tool", tj)
			tool := decode(t, tj)
			if os, ok := at(tool, "outputSchema").(map[string]any); ok && c.rev != modernVersion && str(os["type"]) != "object" {
				t.Errorf("legacy tool %s lists a non-object outputSchema", str(at(tool, "name")))
			}
		}
	}
	// The explicit schema is listed verbatim, $schema and all.
	ex := listTools(t, srv)["explicit"]["inputSchema"]
	if str(at(ex, "$schema")) == "" || at(ex, "oneOf") == nil || at(ex, "$defs", "x") == nil {
		t.Errorf("explicit schema not listed verbatim: %s", toJSON(t, ex))
	}
	// A draft-07 schema is validated by its own dialect.
	r := callReq(1, "draft07", map[string]any{"a": "x"}).do(t, srv).result(t)
	if r["isError"] != true {
		t.Errorf("draft-07 schema not applied: %v", r)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAdvancedMode checks ListToolsHandler / CallToolHandler: pagination
// with the handler's own cursors, calls finding their tool by walking the
// pages, argument and header validation, and per-page cache hints.
func TestAdvancedMode(t *testing.T) {
	t.Parallel()
	pages := map[string]*core.ListToolsResult{
		"": {Tools: []*core.Tool{
			{Name: "alpha", Description: "First."},
			{Name: "beta", Description: "Second.", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		}, NextCursor: ptr("page-2")},
		"page-2": {Tools: []*core.Tool{
			{Name: "gamma", Description: "Third.", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		}, NextCursor: ptr("page-3"), TTLMs: ptr(int64(5000)), CacheScope: core.CacheScopePublic},
		"page-3": {Tools: []*core.Tool{{Name: "delta", Description: "Fourth.", OutputSchema: json.RawMessage(`{"type":"string"}`)}}},
	}
	var listed atomic.Int32
	var called []string
	newSrv := func(tag string) *core.Server {
		return core.NewServer(testImpl, &core.ServerOptions{
			ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
				listed.Add(1)
				p, ok := pages[req.Cursor]
				if !ok {
					return nil, core.InvalidParamsError("Invalid params: unknown cursor")
				}
				return p, nil
			},
			CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
				called = append(called, tag+":"+req.Params.Name)
				res := &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: tag + " called " + req.Params.Name}}}
				if req.Params.Name == "delta" {
					res.StructuredContent = tag + " called delta" // delta declares an outputSchema: a string
				}
				return res, nil
			},
		})
	}
	srv := newSrv("A")

	r1 := mreq(1, "tools/list", nil).do(t, srv)
	res1 := r1.result(t)
	if n := len(at(res1, "tools").([]any)); n != 2 || str(res1["nextCursor"]) != "page-2" {
		t.Fatalf("page 1: %s", r1.Body)
	}
	if num(t, res1["ttlMs"]) != 0 || str(res1["cacheScope"]) != "private" {
		t.Errorf("page 1 hint = %v/%v, want the default 0/private", res1["ttlMs"], res1["cacheScope"])
	}
	if str(at(res1, "tools", 0, "inputSchema", "type")) != "object" {
		t.Errorf("a tool without InputSchema is listed without the default object schema: %s", r1.Body)
	}
	validateSpec(t, modernVersion, "ListToolsResult", r1.resultRaw(t))
	res2 := mreq(2, "tools/list", map[string]any{"cursor": "page-2"}).do(t, srv).result(t)
	if str(at(res2, "tools", 0, "name")) != "gamma" || num(t, res2["ttlMs"]) != 5000 || str(res2["cacheScope"]) != "public" {
		t.Errorf("page 2: %v", res2)
	}
	res3 := mreq(3, "tools/list", map[string]any{"cursor": "page-3"}).do(t, srv).result(t)
	if _, ok := res3["nextCursor"]; ok || str(at(res3, "tools", 0, "name")) != "delta" {
		t.Errorf("page 3: %v", res3)
	}
	mreq(4, "tools/list", map[string]any{"cursor": "bogus"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)

	// Legacy listing drops a non-object output schema.
	lres := lreq(1, "tools/list", map[string]any{"cursor": "page-3"}, core.ProtocolVersion20251125, "").do(t, srv).result(t)
	if has(at(lres, "tools", 0), "outputSchema") {
		t.Errorf("legacy listing carries a non-object outputSchema: %v", lres)
	}

	if got := textOf(callReq(5, "delta", nil).do(t, srv).result(t)); got != "A called delta" {
		t.Errorf("delta (page 3): %q", got)
	}
	if got := textOf(callReq(6, "alpha", nil).do(t, srv).result(t)); got != "A called alpha" {
		t.Errorf("alpha: %q", got)
	}
	callReq(7, "omega", nil).do(t, srv).wantError(t, 200, core.CodeInvalidParams)

	before := len(called)
	bad := callReq(8, "beta", map[string]any{"n": "x"}).do(t, srv).result(t)
	if bad["isError"] != true || len(called) != before {
		t.Errorf("invalid arguments reached the handler or were not an isError result: %v", bad)
	}
	callReq(9, "gamma", map[string]any{"region": "eu"}).do(t, srv).wantError(t, 400, core.CodeHeaderMismatch)
	if got := textOf(callReq(10, "gamma", map[string]any{"region": "eu"}).withHeader("Mcp-Param-Region", "eu").do(t, srv).result(t)); got != "A called gamma" {
		t.Errorf("gamma with header: %q", got)
	}

	// A second server with the same tool definitions calls its own handler.
	other := newSrv("B")
	if got := textOf(callReq(11, "alpha", nil).do(t, other).result(t)); got != "B called alpha" {
		t.Errorf("server B's call of alpha answered %q: it reached another server's CallToolHandler", got)
	}

	t.Run("Validate", func(t *testing.T) {
		o := &core.ServerOptions{ListToolsHandler: func(context.Context, *core.ListToolsRequest) (*core.ListToolsResult, error) { return nil, nil }}
		if o.Validate() == nil {
			t.Error("ListToolsHandler without CallToolHandler accepted")
		}
	})
}

// TestAdvancedPageHint: a page's TTLMs and CacheScope each replace their
// part of the server's tools/list hint (CacheHints); a negative ttlMs is
// the handler's error, a logged -32603 in every era (ttlMs MUST be at
// least 0, 2026-07-28 server/utilities/caching), while a call still finds
// its tool on that page; and an empty string is a cursor the server
// follows, not the last page (2026-07-28 server/utilities/pagination).
func TestAdvancedPageHint(t *testing.T) {
	t.Parallel()
	tool := func(n string) []*core.Tool { return []*core.Tool{{Name: n}} }
	pages := map[string]*core.ListToolsResult{
		"":      {Tools: tool("a"), NextCursor: ptr("ttl")},
		"ttl":   {Tools: tool("b"), NextCursor: ptr("scope"), TTLMs: ptr(int64(250))},
		"scope": {Tools: tool("c"), NextCursor: ptr("neg"), CacheScope: core.CacheScopePrivate},
		"neg":   {Tools: tool("d"), NextCursor: ptr("last"), TTLMs: ptr(int64(-5))},
		"last":  {Tools: tool("e")},
	}
	var logs strings.Builder
	var mu sync.Mutex
	srv := core.NewServer(testImpl, &core.ServerOptions{
		Logger:     slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)),
		CacheHints: map[string]core.CacheHint{"tools/list": {TTL: time.Minute, Scope: core.CacheScopePublic}},
		ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			return pages[req.Cursor], nil
		},
		CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "ran " + req.Params.Name}}}, nil
		},
	})
	for i, want := range []struct {
		cursor string
		ttl    int64
		scope  string
	}{{"", 60000, "public"}, {"ttl", 250, "public"}, {"scope", 60000, "private"}, {"last", 60000, "public"}} {
		var params map[string]any
		if want.cursor != "" {
			params = map[string]any{"cursor": want.cursor}
		}
		res := mreq(i+1, "tools/list", params).do(t, srv).result(t)
		if num(t, res["ttlMs"]) != want.ttl || str(res["cacheScope"]) != want.scope {
			t.Errorf("page %q: hint %v/%v, want %v/%v", want.cursor, res["ttlMs"], res["cacheScope"], want.ttl, want.scope)
		}
	}
	neg := map[string]any{"cursor": "neg"}
	mreq(6, "tools/list", neg).do(t, srv).wantError(t, 200, core.CodeInternalError)
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, "ttlMs -5") {
		t.Errorf("a negative ttlMs was not logged as an error: %q", logged)
	}
	lreq(7, "tools/list", neg, core.ProtocolVersion20251125, "").do(t, srv).wantError(t, 200, core.CodeInternalError)
	// The page's hint is not the call's business: a call finds its tool
	// on that page.
	if res := mreq(8, "tools/call", map[string]any{"name": "d", "arguments": map[string]any{}}).do(t, srv).result(t); str(at(res, "content", 0, "text")) != "ran d" {
		t.Errorf("call to a tool on a page with a negative ttlMs: %v", res)
	}
	// A call walks the pages to its tool: "" as a next cursor is followed,
	// and listing follows it too.
	walked := core.NewServer(testImpl, &core.ServerOptions{
		ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			if !req.HasCursor {
				return &core.ListToolsResult{Tools: tool("first"), NextCursor: ptr("")}, nil
			}
			if req.Cursor == "" {
				return &core.ListToolsResult{Tools: tool("second")}, nil
			}
			return nil, core.InvalidParamsError("Invalid params: unknown cursor")
		},
		CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "ran " + req.Params.Name}}}, nil
		},
	})
	first := mreq(10, "tools/list", nil).do(t, walked).result(t)
	if next, ok := first["nextCursor"]; !ok || next != "" {
		t.Fatalf(`first page: nextCursor %v (present %v), want ""`, next, ok)
	}
	res := mreq(11, "tools/call", map[string]any{"name": "second", "arguments": map[string]any{}}).do(t, walked).result(t)
	if str(at(res, "content", 0, "text")) != "ran second" {
		t.Fatalf(`the call did not find the tool behind the cursor "": %v`, res)
	}
}

// TestAdvancedLegacyUnlisted checks a legacy call, in advanced mode, to a tool
// the list handler does not return: CallToolHandler receives the name and
// decides the response (an unknown tool is then its -32602, or a result).
// A 2026-07-28 call still needs a listed tool (unknown tool: -32602 before
// any handler), since its Mcp-Param headers are checked against the tool's
// definition; a listed tool is validated in both eras.
func TestAdvancedLegacyUnlisted(t *testing.T) {
	t.Parallel()
	var called []string
	var mu sync.Mutex
	srv := core.NewServer(testImpl, &core.ServerOptions{
		ListToolsHandler: func(ctx context.Context, req *core.ListToolsRequest) (*core.ListToolsResult, error) {
			return &core.ListToolsResult{Tools: []*core.Tool{{Name: "listed", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}}}, nil
		},
		CallToolHandler: func(ctx context.Context, req *core.CallToolRequest) (*core.CallToolResult, error) {
			mu.Lock()
			called = append(called, req.Params.Name+" "+string(req.Params.Arguments))
			mu.Unlock()
			switch req.Params.Name {
			case "listed", "hidden":
				return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "ran " + req.Params.Name}}}, nil
			}
			return nil, core.InvalidParamsError("No tool %s here", req.Params.Name)
		},
	})
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), called...)
	}
	for _, version := range []string{core.ProtocolVersion20251125, core.ProtocolVersion20250618, core.ProtocolVersion20250326} {
		sid := initialize(t, srv, version, nil, nil)
		v := version
		if v == core.ProtocolVersion20250326 {
			v = ""
		}
		call := func(name string, args map[string]any) *resp {
			return lreq(1, "tools/call", map[string]any{"name": name, "arguments": args}, v, sid).do(t, srv)
		}
		before := len(calls())
		r := call("hidden", map[string]any{"x": 1})
		validateSpec(t, core.ProtocolVersion20251125, "CallToolResult", r.resultRaw(t))
		if got := textOf(r.result(t)); got != "ran hidden" {
			t.Errorf("%s: unlisted tool: %q, want CallToolHandler's result", version, got)
		}
		e := call("nope", nil).wantError(t, 200, core.CodeInvalidParams)
		if str(e["message"]) != "No tool nope here" {
			t.Errorf("%s: unknown tool: %v, want CallToolHandler's own error", version, e)
		}
		// A listed tool's arguments are still validated before the handler.
		if res := call("listed", map[string]any{"n": "x"}).result(t); res["isError"] != true {
			t.Errorf("%s: invalid arguments of a listed tool: %v", version, res)
		}
		if got := calls()[before:]; strings.Join(got, ";") != `hidden {"x":1};nope {}` {
			t.Errorf("%s: CallToolHandler saw %q", version, got)
		}
	}
	// Sessionless legacy calls too.
	if got := textOf(lreq(1, "tools/call", map[string]any{"name": "hidden"}, core.ProtocolVersion20250618, "").do(t, srv).result(t)); got != "ran hidden" {
		t.Errorf("sessionless legacy call of an unlisted tool: %q", got)
	}
	before := len(calls())
	e := callReq(1, "hidden", nil).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	if str(e["message"]) != "Unknown tool: hidden" || len(calls()) != before {
		t.Errorf("2026-07-28 call of an unlisted tool: %v (handler calls %d → %d)", e, before, len(calls()))
	}
}

type headerArgs struct {
	Region string `json:"region,omitempty" jsonschema_extras:"x-mcp-header=Region"`
	Count  *int   `json:"count,omitempty" jsonschema_extras:"x-mcp-header=Count"`
	Flag   *bool  `json:"flag,omitempty" jsonschema_extras:"x-mcp-header=Flag"`
	Note   string `json:"note,omitempty"`
}

// TestParamHeaders checks the Mcp-Param-* validation of a tool declaring
// x-mcp-header (2026-07-28 server/tools §x-mcp-header).
func TestParamHeaders(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "deploy", Description: "Deploys."},
		func(ctx context.Context, req *core.CallToolRequest, in headerArgs) (string, error) {
			calls.Add(1)
			return "ok " + in.Region, nil
		})
	core.AddTool(srv, &core.Tool{Name: "nested", Description: "Nested header.", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`)},
		func(ctx context.Context, req *core.CallToolRequest, in map[string]any) (string, error) {
			return "nested ok", nil
		})

	props := at(listTools(t, srv)["deploy"], "inputSchema", "properties")
	if str(at(props, "region", "x-mcp-header")) != "Region" || str(at(props, "count", "x-mcp-header")) != "Count" {
		t.Fatalf("x-mcp-header not in the listed schema: %s", toJSON(t, props))
	}

	type hc struct {
		name    string
		args    map[string]any
		headers map[string]string
		raw     map[string][]string // headers set without encoding
		ok      bool
		pass    bool // the headers pass; the call may still fail validation
	}
	cases := []hc{
		{name: "all match", args: map[string]any{"region": "eu-west-1", "count": 3, "flag": true},
			headers: map[string]string{"Mcp-Param-Region": "eu-west-1", "Mcp-Param-Count": "3", "Mcp-Param-Flag": "true"}, ok: true},
		{name: "header names case-insensitive", args: map[string]any{"region": "eu"},
			raw: map[string][]string{"MCP-PARAM-REGION": {"eu"}}, ok: true},
		{name: "no arguments no headers", args: map[string]any{}, ok: true},
		{name: "missing header", args: map[string]any{"region": "eu"}},
		{name: "mismatch", args: map[string]any{"region": "eu"}, headers: map[string]string{"Mcp-Param-Region": "us"}},
		{name: "value case differs", args: map[string]any{"region": "eu"}, headers: map[string]string{"Mcp-Param-Region": "EU"}},
		{name: "integer numerically equal", args: map[string]any{"count": 42}, headers: map[string]string{"Mcp-Param-Count": "42.0"}, ok: true},
		{name: "integer exponent form", args: map[string]any{"count": 42}, headers: map[string]string{"Mcp-Param-Count": "4.2e1"}, ok: true},
		{name: "integer different", args: map[string]any{"count": 42}, headers: map[string]string{"Mcp-Param-Count": "42.5"}},
		{name: "integer not a number", args: map[string]any{"count": 42}, headers: map[string]string{"Mcp-Param-Count": "forty-two"}},
		{name: "boolean exact", args: map[string]any{"flag": false}, headers: map[string]string{"Mcp-Param-Flag": "false"}, ok: true},
		{name: "boolean capitalised", args: map[string]any{"flag": true}, headers: map[string]string{"Mcp-Param-Flag": "True"}},
		{name: "boolean as 1", args: map[string]any{"flag": true}, headers: map[string]string{"Mcp-Param-Flag": "1"}},
		{name: "Base64 value", args: map[string]any{"region": "Zürich"}, headers: map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?="}, ok: true},
		{name: "Base64 of plain value", args: map[string]any{"region": "eu"}, headers: map[string]string{"Mcp-Param-Region": "=?base64?ZXU=?="}, ok: true},
		{name: "Base64 invalid", args: map[string]any{"region": "eu"}, headers: map[string]string{"Mcp-Param-Region": "=?base64?***?="}},
		{name: "Base64 of another value", args: map[string]any{"region": "eu"}, headers: map[string]string{"Mcp-Param-Region": "=?base64?dXM=?="}},
		{name: "non-ASCII plain value", args: map[string]any{"region": "Zürich"}, raw: map[string][]string{"Mcp-Param-Region": {"Zürich"}}},
		{name: "header for an absent value", args: map[string]any{"note": "n"}, headers: map[string]string{"Mcp-Param-Region": "eu"}},
		{name: "null value no header", args: map[string]any{"region": nil}, pass: true},
		{name: "header for a null value", args: map[string]any{"region": nil}, headers: map[string]string{"Mcp-Param-Region": "null"}},
		{name: "repeated header", args: map[string]any{"region": "eu"}, raw: map[string][]string{"Mcp-Param-Region": {"eu", "eu"}}},
		{name: "unknown Mcp-Param header ignored", args: map[string]any{"region": "eu"},
			headers: map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Other": "x"}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := calls.Load()
			r := callReq(1, "deploy", c.args)
			for k, v := range c.headers {
				r.withHeader(k, v)
			}
			for k, v := range c.raw {
				r.hdr[http.CanonicalHeaderKey(k)] = v
			}
			res := r.do(t, srv)
			if c.pass {
				if res.Status != 200 || has(res.final(t), "error") {
					t.Fatalf("want the headers accepted: HTTP %d %s", res.Status, res.Body)
				}
				return
			}
			if c.ok {
				if res.Status != 200 || res.result(t)["isError"] != nil {
					t.Fatalf("want success: HTTP %d %s", res.Status, res.Body)
				}
				return
			}
			res.wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
			res.wantID(t, "1")
			if calls.Load() != before {
				t.Errorf("the handler ran despite the header mismatch")
			}
		})
	}
	t.Run("nested property", func(t *testing.T) {
		r := callReq(1, "nested", map[string]any{"target": map[string]any{"zone": "z1"}})
		r.do(t, srv).wantError(t, 400, core.CodeHeaderMismatch)
		r.withHeader("Mcp-Param-Zone", "z1")
		if got := textOf(r.do(t, srv).result(t)); got != "nested ok" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("unknown tool looked up first", func(t *testing.T) {
		callReq(1, "nope", map[string]any{"region": "eu"}).do(t, srv).wantError(t, 200, core.CodeInvalidParams)
	})
	t.Run("legacy calls carry no Mcp-Param headers", func(t *testing.T) {
		r := lreq(1, "tools/call", map[string]any{"name": "deploy", "arguments": map[string]any{"region": "eu"}}, core.ProtocolVersion20251125, "").do(t, srv)
		if got := textOf(r.result(t)); got != "ok eu" {
			t.Errorf("legacy call: %s", r.Body)
		}
	})
}

// TestRuntimeParamsNotInSchemas checks that the input schema of a typed tool
// holds exactly the argument fields: context, request, session and input
// responses travel outside it.
func TestRuntimeParamsNotInSchemas(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	tools := listTools(t, srv)
	schema := tools["add"]["inputSchema"]
	if got := keys(at(schema, "properties")); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("properties = %v, want [a b]", got)
	}
	for name, tool := range tools {
		s := string(toJSON(t, tool["inputSchema"]))
		for _, banned := range []string{"Request", "Session", "Principal", "InputResponses", "requestState", "inputResponses", "_meta", "ctx", "Header"} {
			if strings.Contains(s, banned) {
				t.Errorf("tool %s: input schema mentions %q: %s", name, banned, s)
			}
		}
		if str(at(tool, "inputSchema", "type")) != "object" {
			t.Errorf("tool %s: input schema root is not an object", name)
		}
		if has(tool, "inputSchema", "$schema") || has(tool, "inputSchema", "$id") || has(tool, "inputSchema", "$ref") {
			t.Errorf("tool %s: derived schema carries $schema, $id or $ref: %s", name, s)
		}
	}
}

// With ServerOptions.ToolErrorResults a tool handler's plain error is an
// isError result with its message (go-sdk's behaviour), in both eras; a
// panic, an *Error and a ToolError are answered as without it.
func TestToolErrorResults(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, &core.ServerOptions{ToolErrorResults: true})
	core.AddTool(srv, &core.Tool{Name: "wrapped_error", Description: "Fails with a wrapped *Error."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			return "", fmt.Errorf("looking up: %w", core.InvalidParamsError("no such widget"))
		})
	core.AddTool(srv, &core.Tool{Name: "nil_result", Description: "Returns no result."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
			return nil, nil
		})
	sid := initialize(t, srv, legacyVersion, nil, nil)
	for _, era := range []struct {
		name string
		call func(tool string) *testReq
	}{
		{"modern", func(tool string) *testReq { return callReq(1, tool, nil) }},
		{"legacy", func(tool string) *testReq {
			return lreq(1, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, legacyVersion, sid)
		}},
	} {
		t.Run(era.name, func(t *testing.T) {
			r := era.call("plain_error").do(t, srv)
			res := r.result(t)
			if res["isError"] != true || textOf(res) != "secret database password hunter2" {
				t.Errorf("plain error: want an isError result with its message: %s", r.Body)
			}
			r = era.call("tool_error").do(t, srv)
			if res := r.result(t); res["isError"] != true || textOf(res) != "the date 2020-01-01 is in the past" {
				t.Errorf("tool error: %s", r.Body)
			}
			r = era.call("panic").do(t, srv)
			r.wantError(t, http.StatusOK, core.CodeInternalError)
			if strings.Contains(string(r.Body), "secret") {
				t.Errorf("panic text leaked: %s", r.Body)
			}
			r = era.call("invalid_params").do(t, srv)
			if e := r.wantError(t, http.StatusOK, core.CodeInvalidParams); str(e["message"]) != `the widget "w1" is unknown` {
				t.Errorf("InvalidParamsError: %s", r.Body)
			}
			r = era.call("wrapped_error").do(t, srv)
			if e := r.wantError(t, http.StatusOK, core.CodeInvalidParams); str(e["message"]) != "no such widget" {
				t.Errorf("a wrapped *Error: %s", r.Body)
			}
			r = era.call("nil_result").do(t, srv)
			if e := r.wantError(t, http.StatusOK, core.CodeInternalError); str(e["message"]) != "Internal error" {
				t.Errorf("the server's own fault: %s", r.Body)
			}
		})
	}
}

// TestResultBuffersRecycled checks the recycling of response buffers
// (Request.resultBuffer): results a user's middleware keeps stay intact,
// and without such middleware, with or without the request record,
// answers that reuse a buffer are each exactly their own, in both eras,
// also for results too large for a recycled buffer.
func TestResultBuffersRecycled(t *testing.T) {
	t.Parallel()
	type echoArgs struct {
		Text string `json:"text"`
	}
	newServer := func(opts *core.ServerOptions) *core.Server {
		srv := core.NewServer(testImpl, opts)
		core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, in echoArgs) (string, error) {
			return in.Text, nil
		})
		return srv
	}
	texts := []string{"a", strings.Repeat("b", 40), "c", strings.Repeat("d", 600), "e", strings.Repeat("f", 200)}
	calls := func(t *testing.T, srv *core.Server, check func(i int, body []byte)) {
		sid := initialize(t, srv, core.ProtocolVersion20251125, nil, nil)
		for round := 0; round < 3; round++ {
			for i, text := range texts {
				args := map[string]any{"text": text}
				modern := callReq(i, "echo", args)
				legacy := lreq(i, "tools/call", map[string]any{"name": "echo", "arguments": args}, core.ProtocolVersion20251125, sid)
				for _, r := range []*testReq{modern, legacy} {
					res := r.do(t, srv)
					if got := textOf(res.result(t)); got != text {
						t.Fatalf("call %d: text %.20q…, want %.20q…", i, got, text)
					}
					check(i, res.Body)
				}
			}
		}
	}
	t.Run("kept by middleware", func(t *testing.T) {
		t.Parallel()
		var kept [][]byte
		var copies [][]byte
		keep := func(next core.Handler) core.Handler {
			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
				out, err := next(ctx, c)
				if err == nil && c.Method == "tools/call" {
					kept = append(kept, out.Result)
					copies = append(copies, append([]byte(nil), out.Result...))
				}
				return out, err
			}
		}
		calls(t, newServer(&core.ServerOptions{Logger: slog.New(slog.DiscardHandler), Middleware: []core.Middleware{keep}}), func(int, []byte) {})
		if len(kept) != 3*2*len(texts) {
			t.Fatalf("middleware saw %d results, want %d", len(kept), 3*2*len(texts))
		}
		for i := range kept {
			if !bytes.Equal(kept[i], copies[i]) {
				t.Fatalf("result %d changed after its response: %.60s…, was %.60s…", i, kept[i], copies[i])
			}
		}
	})
	for _, c := range []struct {
		name string
		opts *core.ServerOptions
	}{
		{"no middleware", quietBench()},
		{"request record", &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var bodies [][]byte
			calls(t, newServer(c.opts), func(i int, body []byte) { bodies = append(bodies, body) })
			for i, b := range bodies {
				if !bytes.Contains(b, []byte(`"text":"`+texts[(i/2)%len(texts)]+`"`)) {
					t.Fatalf("response %d: %.80s…", i, b)
				}
			}
		})
	}
}

// TestDuplicateArgumentKeys checks that duplicate keys anywhere in tool or
// prompt arguments (or inputResponses) are a -32602, with the key named.
func TestDuplicateArgumentKeys(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, nil)
	for _, c := range []struct{ method, name, args string }{
		{"tools/call", "add", `{"a":1,"b":2,"a":40}`},
		{"tools/call", "add", `{"a":1,"b":2,"\u0061":40}`},
		{"tools/call", "add", `{"a":1,"b":2,"c":{"x":[{"y":1,"y":2}]}}`},
		{"prompts/get", "greet", `{"who":"a","who":"b"}`},
	} {
		r := rawArgs(t, c.method, c.name, c.args).do(t, srv)
		e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
		if msg := str(e["message"]); !strings.Contains(msg, "duplicate key") {
			t.Errorf("%s %s: message %q", c.method, c.args, msg)
		}
	}
	r := callReq(1, "add", map[string]any{"a": 1, "b": 2}).withParam("inputResponses", json.RawMessage(`{"k":{},"k":{}}`)).do(t, srv)
	r.wantError(t, http.StatusOK, core.CodeInvalidParams)
	assertServes(t, srv)
}

// TestArgumentsBindCaseSensitively: with a schema that allows additional
// properties, {"region":"us","REGION":"eu"} passes validation and the
// Mcp-Param-Region: us check; encoding/json would bind "eu" (a
// case-insensitive match) to the field the header vouched for. The handler
// sees exactly what was validated: "us".
func TestArgumentsBindCaseSensitively(t *testing.T) {
	t.Parallel()
	type args struct {
		Region string `json:"region"`
	}
	got := make(chan string, 1)
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "deploy", Description: "Deploys.", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"],"additionalProperties":true}`)},
		func(ctx context.Context, req *core.CallToolRequest, in args) (string, error) {
			got <- in.Region
			return "deployed to " + in.Region, nil
		})
	r := rawArgs(t, "tools/call", "deploy", `{"region":"us","REGION":"eu"}`).withHeader("Mcp-Param-Region", "us").do(t, srv)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.Status, r.Body)
	}
	if res := r.result(t); res["isError"] == true {
		t.Fatalf("isError: %s", r.Body)
	}
	if region := <-got; region != "us" {
		t.Fatalf("the handler got region %q; validated and vouched for by Mcp-Param-Region: %q", region, "us")
	}
}

// TestArgumentsBindLikeEncodingJSON checks what the case-sensitive decoder
// keeps of encoding/json: 42.0 binds to an int (the schema calls it an
// integer), json tags with omitempty and string work, unknown members are
// ignored, and a type mismatch is an isError result naming the field.
func TestArgumentsBindLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	type args struct {
		N    int    `json:"n"`
		Q    int    `json:"q,string"`
		Name string `json:"name,omitempty"`
		Skip string `json:"-"`
	}
	got := make(chan args, 1)
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "bind", Description: "Binds.", InputSchema: json.RawMessage(`{"type":"object",
		"properties":{"n":{"type":"integer"},"q":{"type":"string"},"name":{"type":"string"},"tags":{"type":"array"}}}`)},
		func(ctx context.Context, req *core.CallToolRequest, in args) (string, error) {
			got <- in
			return "ok", nil
		})
	r := rawArgs(t, "tools/call", "bind", `{"n":42.0,"q":"7","name":"x","Skip":"no","tags":[1]}`).do(t, srv)
	if res := r.result(t); res["isError"] == true {
		t.Fatalf("isError: %s", r.Body)
	}
	if in := <-got; in != (args{N: 42, Q: 7, Name: "x"}) {
		t.Fatalf("bound %+v", in)
	}
	r = rawArgs(t, "tools/call", "bind", `{"n":1,"q":"seven"}`).do(t, srv)
	if res := r.result(t); res["isError"] != true || !strings.Contains(textOf(res), `"q"`) {
		t.Fatalf("want an isError result naming q: %s", r.Body)
	}
}
