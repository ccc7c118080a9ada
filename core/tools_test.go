package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpfn/mcpfn/core"
)

// listTools returns the tools of one tools/list page, by name.
func listTools(t *testing.T, h http.Handler) map[string]map[string]any {
	t.Helper()
	res := mreq("l", "tools/list", nil).do(t, h).result(t)
	out := map[string]map[string]any{}
	for _, x := range at(res, "tools").([]any) {
		m := x.(map[string]any)
		out[str(m["name"])] = m
	}
	return out
}

// validateAgainst validates instance (raw JSON) against schema (decoded).
func validateAgainst(t *testing.T, schema any, instance []byte) error {
	t.Helper()
	sb := toJSON(t, schema)
	var s jsonschema.Schema
	if err := json.Unmarshal(sb, &s); err != nil {
		t.Fatalf("advertised schema does not decode: %v\n%s", err, sb)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: "mem:///s.json"})
	if err != nil {
		t.Fatalf("advertised schema does not resolve: %v\n%s", err, sb)
	}
	var inst any
	if err := json.Unmarshal(instance, &inst); err != nil {
		t.Fatal(err)
	}
	return rs.Validate(inst)
}

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// TestStructuredOutputAuto checks OutputAuto for result types of every JSON
// root: structuredContent is the raw value, the text block is the string
// itself, its JSON, or absent for nil; the structured content conforms to
// the advertised output schema (2026-07-28 server/tools).
func TestStructuredOutputAuto(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "struct"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) {
		return point{1, 2}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "int"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (int, error) { return -7, nil })
	core.AddTool(srv, &core.Tool{Name: "float"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (float64, error) { return 2.5, nil })
	core.AddTool(srv, &core.Tool{Name: "bool"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (bool, error) { return true, nil })
	core.AddTool(srv, &core.Tool{Name: "string"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (string, error) {
		return `he said "<hi>"`, nil
	})
	core.AddTool(srv, &core.Tool{Name: "slice"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) ([]point, error) {
		return []point{{1, 2}, {3, 4}}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "map"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (map[string]int, error) {
		return map[string]int{"a": 1}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "any"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (any, error) {
		return []any{"x", 1}, nil
	})
	cases := []struct {
		tool       string
		structured string // JSON; "" = absent
		text       string // text block; "" = no block
		textIsJSON bool
	}{
		{"struct", `{"x":1,"y":2}`, `{"x":1,"y":2}`, true},
		{"int", `-7`, `-7`, false},
		{"float", `2.5`, `2.5`, false},
		{"bool", `true`, `true`, false},
		{"string", `"he said \"<hi>\""`, `he said "<hi>"`, false},
		{"slice", `[{"x":1,"y":2},{"x":3,"y":4}]`, `[{"x":1,"y":2},{"x":3,"y":4}]`, true},
		{"map", `{"a":1}`, `{"a":1}`, true},
		{"any", `["x",1]`, `["x",1]`, true},
	}
	tools := listTools(t, srv)
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			r := callReq(1, c.tool, nil).do(t, srv)
			res := r.result(t)
			raw := map[string]json.RawMessage{}
			json.Unmarshal(r.resultRaw(t), &raw)
			if c.structured == "" {
				if _, ok := raw["structuredContent"]; ok {
					t.Errorf("structuredContent present: %s", raw["structuredContent"])
				}
			} else if !jsonEq(t, raw["structuredContent"], []byte(c.structured)) {
				t.Errorf("structuredContent = %s, want %s", raw["structuredContent"], c.structured)
			}
			content := at(res, "content").([]any)
			if len(content) != 1 || str(at(content, 0, "type")) != "text" {
				t.Fatalf("content = %v, want one text block", content)
			}
			got := textOf(res)
			if c.textIsJSON {
				if !jsonEq(t, []byte(got), []byte(c.text)) {
					t.Errorf("text = %s, want the JSON %s", got, c.text)
				}
			} else if got != c.text {
				t.Errorf("text = %q, want %q", got, c.text)
			}
			if res["isError"] != nil {
				t.Errorf("isError = %v", res["isError"])
			}
			if os, ok := tools[c.tool]["outputSchema"]; ok {
				if err := validateAgainst(t, os, raw["structuredContent"]); err != nil {
					t.Errorf("structuredContent does not conform to the advertised outputSchema: %v", err)
				}
			} else if c.tool != "any" {
				t.Errorf("no outputSchema advertised for %s", c.tool)
			}
			validateSpec(t, modernVersion, "CallToolResult", r.resultRaw(t))
		})
	}
}

// TestStructuredOutputNil checks nil results of pointer and slice types: no
// text block, and structured content that conforms to the advertised output
// schema (2026-07-28 server/tools: with an outputSchema the server MUST return
// conforming structuredContent).
func TestStructuredOutputNil(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "nilptr"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*point, error) {
		return nil, nil
	})
	core.AddTool(srv, &core.Tool{Name: "nilslice"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) ([]string, error) {
		return nil, nil
	})
	tools := listTools(t, srv)
	for _, name := range []string{"nilptr", "nilslice"} {
		t.Run(name, func(t *testing.T) {
			r := callReq(1, name, nil).do(t, srv)
			res := r.result(t)
			if c := at(res, "content").([]any); len(c) != 0 {
				t.Errorf("content = %v, want no block for a nil result", c)
			}
			raw := map[string]json.RawMessage{}
			json.Unmarshal(r.resultRaw(t), &raw)
			os, ok := tools[name]["outputSchema"]
			if !ok {
				return // no schema, nothing to conform to
			}
			sc, present := raw["structuredContent"]
			if !present {
				t.Fatalf("outputSchema %v advertised but no structuredContent", os)
			}
			if err := validateAgainst(t, os, sc); err != nil {
				t.Errorf("structuredContent %s does not conform to the advertised outputSchema %s: %v", sc, toJSON(t, os), err)
			}
		})
	}
}

// TestOutputPolicies checks OutputRequired, OutputDisabled and raw
// *CallToolResult handlers.
func TestOutputPolicies(t *testing.T) {
	t.Parallel()
	t.Run("required without derivable schema panics", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		msg := mustPanic(t, func() {
			core.AddTool(srv, &core.Tool{Name: "anything", StructuredOutput: core.OutputRequired},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (any, error) { return 1, nil })
		})
		if !strings.Contains(msg, `"anything"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("required with raw result and no schema panics", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		msg := mustPanic(t, func() {
			core.AddTool(srv, &core.Tool{Name: "rawreq", StructuredOutput: core.OutputRequired},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
					return nil, nil
				})
		})
		if !strings.Contains(msg, `"rawreq"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("required with a struct works", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "p", StructuredOutput: core.OutputRequired},
			func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{5, 6}, nil })
		if _, ok := listTools(t, srv)["p"]["outputSchema"]; !ok {
			t.Error("no outputSchema")
		}
		res := callReq(1, "p", nil).do(t, srv).result(t)
		if num(t, at(res, "structuredContent", "x")) != 5 {
			t.Errorf("structuredContent = %v", res["structuredContent"])
		}
	})
	t.Run("disabled with OutputSchema panics", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		msg := mustPanic(t, func() {
			core.AddTool(srv, &core.Tool{Name: "dis", StructuredOutput: core.OutputDisabled, OutputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{}, nil })
		})
		if !strings.Contains(msg, `"dis"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "dis", StructuredOutput: core.OutputDisabled},
			func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{1, 2}, nil })
		if os, ok := listTools(t, srv)["dis"]["outputSchema"]; ok {
			t.Errorf("outputSchema %v listed for a disabled tool", os)
		}
		res := callReq(1, "dis", nil).do(t, srv).result(t)
		if _, ok := res["structuredContent"]; ok {
			t.Errorf("structuredContent sent: %v", res)
		}
		if !jsonEq(t, []byte(textOf(res)), []byte(`{"x":1,"y":2}`)) {
			t.Errorf("text = %q", textOf(res))
		}
	})
	t.Run("explicit OutputSchema is listed verbatim", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		schema := `{"type":"object","properties":{"x":{"type":"integer","minimum":0}},"required":["x"]}`
		core.AddTool(srv, &core.Tool{Name: "exp", OutputSchema: json.RawMessage(schema)},
			func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{1, 2}, nil })
		if got := listTools(t, srv)["exp"]["outputSchema"]; !jsonEq(t, toJSON(t, got), []byte(schema)) {
			t.Errorf("outputSchema = %s, want %s", toJSON(t, got), schema)
		}
	})
	t.Run("CallToolResult returned as is", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		want := &core.CallToolResult{
			Content: []core.Content{
				&core.TextContent{Text: "a"},
				&core.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
				&core.ResourceLink{URI: "test://x", Name: "x"},
			},
			StructuredContent: map[string]any{"k": "v"},
			IsError:           true,
			Meta:              core.Meta{"com.example/trace": "t1"},
		}
		core.AddTool(srv, &core.Tool{Name: "raw"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
			return want, nil
		})
		if _, ok := listTools(t, srv)["raw"]["outputSchema"]; ok {
			t.Error("outputSchema listed for a *CallToolResult tool without OutputSchema")
		}
		r := callReq(1, "raw", nil).do(t, srv)
		res := r.result(t)
		wantContent := `[{"type":"text","text":"a"},{"type":"image","data":"AQID","mimeType":"image/png"},{"type":"resource_link","uri":"test://x","name":"x"}]`
		if !jsonEq(t, toJSON(t, res["content"]), []byte(wantContent)) {
			t.Errorf("content = %s, want %s", toJSON(t, res["content"]), wantContent)
		}
		if str(at(res, "structuredContent", "k")) != "v" || res["isError"] != true || str(at(res, "_meta", "com.example/trace")) != "t1" {
			t.Errorf("result not passed as is: %s", r.Body)
		}
		if at(res, "_meta", core.MetaServerInfo, "name") != testImpl.Name {
			t.Errorf("serverInfo missing next to the handler's _meta: %s", r.Body)
		}
		validateSpec(t, modernVersion, "CallToolResult", r.resultRaw(t))
	})
	t.Run("nil CallToolResult is an internal error", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "nilraw"}, func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
			return nil, nil
		})
		callReq(1, "nilraw", nil).do(t, srv).wantError(t, 200, core.CodeInternalError)
	})
}

// TestToolRegistrationErrors checks that invalid definitions panic with a
// message naming the tool (2026-07-28 server/tools §x-mcp-header).
func TestToolRegistrationErrors(t *testing.T) {
	t.Parallel()
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	cases := []struct {
		name   string
		tool   *core.Tool
		reason string // part of the message
	}{
		{"empty name", &core.Tool{Name: ""}, ""},
		{"space in name", &core.Tool{Name: "has space"}, ""},
		{"non-ASCII name", &core.Tool{Name: "añadir"}, ""},
		{"name too long", &core.Tool{Name: strings.Repeat("n", 129)}, ""},
		{"string root", &core.Tool{Name: "strroot", InputSchema: json.RawMessage(`{"type":"string"}`)}, "object"},
		{"no type", &core.Tool{Name: "notype", InputSchema: json.RawMessage(`{"properties":{}}`)}, "object"},
		{"schema not JSON", &core.Tool{Name: "notjson", InputSchema: json.RawMessage(`{"type":`)}, ""},
		{"schema invalid", &core.Tool{Name: "badschema", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":5}}}`)}, ""},
		{"header not a token", &core.Tool{Name: "h1", InputSchema: obj(`"a":{"type":"string","x-mcp-header":"bad header"}`)}, "bad header"},
		{"header empty", &core.Tool{Name: "h2", InputSchema: obj(`"a":{"type":"string","x-mcp-header":""}`)}, "x-mcp-header"},
		{"header with colon", &core.Tool{Name: "h2b", InputSchema: obj(`"a":{"type":"string","x-mcp-header":"A:B"}`)}, "x-mcp-header"},
		{"header not a string", &core.Tool{Name: "h3", InputSchema: obj(`"a":{"type":"string","x-mcp-header":5}`)}, "x-mcp-header"},
		{"header duplicate case-insensitive", &core.Tool{Name: "h4", InputSchema: obj(`"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}`)}, "egion"},
		{"header on a number", &core.Tool{Name: "h5", InputSchema: obj(`"a":{"type":"number","x-mcp-header":"A"}`)}, "number"},
		{"header on an object", &core.Tool{Name: "h6", InputSchema: obj(`"a":{"type":"object","x-mcp-header":"A"}`)}, "x-mcp-header"},
		{"header without type", &core.Tool{Name: "h6b", InputSchema: obj(`"a":{"x-mcp-header":"A"}`)}, "x-mcp-header"},
		{"header under items", &core.Tool{Name: "h7", InputSchema: obj(`"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}`)}, "x-mcp-header"},
		{"header under anyOf", &core.Tool{Name: "h8", InputSchema: obj(`"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}`)}, "x-mcp-header"},
		{"header under oneOf at root", &core.Tool{Name: "h8b", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`)}, "x-mcp-header"},
		{"header under $ref target", &core.Tool{Name: "h9", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string","x-mcp-header":"A"}}}`)}, "x-mcp-header"},
		{"header on the root", &core.Tool{Name: "h10", InputSchema: json.RawMessage(`{"type":"object","x-mcp-header":"Root"}`)}, "x-mcp-header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := core.NewServer(testImpl, nil)
			msg := mustPanic(t, func() { core.AddTool(srv, c.tool, add) })
			if !strings.Contains(msg, fmt.Sprintf("%q", c.tool.Name)) {
				t.Errorf("panic %q does not name the tool %q", msg, c.tool.Name)
			}
			if !strings.Contains(msg, c.reason) {
				t.Errorf("panic %q does not mention %q", msg, c.reason)
			}
			// No tool registered: tools/list is not even served.
			mreq(1, "tools/list", nil).do(t, srv).wantError(t, http.StatusNotFound, core.CodeMethodNotFound)
		})
	}
	t.Run("valid names", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		for _, n := range []string{"a", "A-b_c.d/e", strings.Repeat("n", 128)} {
			core.AddTool(srv, &core.Tool{Name: n}, add)
		}
		if n := len(listToolsAll(t, srv)); n != 3 {
			t.Errorf("%d tools, want 3", n)
		}
	})
	t.Run("valid headers", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "ok", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"s":{"type":"string","x-mcp-header":"S"},"i":{"type":"integer","x-mcp-header":"I"},"b":{"type":"boolean","x-mcp-header":"B"},
			"o":{"type":"object","properties":{"n":{"type":"string","x-mcp-header":"Nested"}}}}}`)}, add)
	})
}

// listToolsAll returns the names of all tools over every page.
func listToolsAll(t *testing.T, h http.Handler) []string {
	t.Helper()
	var names []string
	var cursor any
	for i := 0; i < 1000; i++ {
		p := map[string]any{}
		if cursor != nil {
			p["cursor"] = cursor
		}
		res := mreq(i, "tools/list", p).do(t, h).result(t)
		for _, x := range at(res, "tools").([]any) {
			names = append(names, str(at(x, "name")))
		}
		next, ok := res["nextCursor"]
		if !ok {
			return names
		}
		cursor = next
	}
	t.Fatal("too many pages")
	return nil
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

// TestToolOrder checks that tools/list is sorted by name whatever the
// registration order, and stable across requests.
func TestToolOrder(t *testing.T) {
	t.Parallel()
	var names []string
	for i := 0; i < 30; i++ {
		names = append(names, fmt.Sprintf("tool_%02d_%c", (i*7)%30, 'a'+rune(i%26)))
	}
	rand.New(rand.NewSource(1)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	srv := core.NewServer(testImpl, &core.ServerOptions{PageSize: 7})
	for _, n := range names {
		core.AddTool(srv, &core.Tool{Name: n}, add)
	}
	got := listToolsAll(t, srv)
	want := append([]string(nil), names...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if again := listToolsAll(t, srv); !reflect.DeepEqual(again, got) {
		t.Errorf("second listing differs")
	}
	srv.RemoveTools(want[0], want[10])
	if n := len(listToolsAll(t, srv)); n != len(want)-2 {
		t.Errorf("%d tools after removing 2 of %d", n, len(want))
	}
}

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
		}, NextCursor: "page-2"},
		"page-2": {Tools: []*core.Tool{
			{Name: "gamma", Description: "Third.", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		}, NextCursor: "page-3", Cache: &core.CacheHint{TTL: 5 * time.Second, Scope: core.CacheScopePublic}},
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
				return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: tag + " called " + req.Params.Name}}}, nil
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
