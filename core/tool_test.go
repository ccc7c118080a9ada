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
	"testing"

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
// the advertised output schema (2026-07-28 server/tools). A result of type
// any has no schema and is text only.
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
		{"any", "", `["x",1]`, true}, // no JSON Schema: text only
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
			} else if c.structured != "" {
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
			core.AddTool(srv, &core.Tool{Name: "anything"},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (any, error) { return 1, nil }, &core.ToolOptions{StructuredOutput: core.OutputRequired})
		})
		if !strings.Contains(msg, `"anything"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("required with raw result and no schema panics", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		msg := mustPanic(t, func() {
			core.AddTool(srv, &core.Tool{Name: "rawreq"},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (*core.CallToolResult, error) {
					return nil, nil
				}, &core.ToolOptions{StructuredOutput: core.OutputRequired})
		})
		if !strings.Contains(msg, `"rawreq"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("required with a struct works", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "p"},
			func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{5, 6}, nil }, &core.ToolOptions{StructuredOutput: core.OutputRequired})
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
			core.AddTool(srv, &core.Tool{Name: "dis", OutputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{}, nil }, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
		})
		if !strings.Contains(msg, `"dis"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		srv := core.NewServer(testImpl, nil)
		core.AddTool(srv, &core.Tool{Name: "dis"},
			func(ctx context.Context, _ *core.CallToolRequest, _ noArgs) (point, error) { return point{1, 2}, nil }, &core.ToolOptions{StructuredOutput: core.OutputDisabled})
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

// shape is an interface result type: it has no JSON Schema of its own.
type shape interface{ Area() int }

type square struct {
	Side int `json:"side"`
}

func (s square) Area() int { return s.Side * s.Side }

// TestStructuredContentHasSchema checks, in every era, that a result sent
// with structuredContent comes from a tool whose tools/list entry for that
// era advertises an outputSchema, and conforms to it: a result type without
// a JSON Schema (an interface type such as any, json.RawMessage) stays
// unstructured unless Tool.OutputSchema supplies one, and legacy revisions,
// whose outputSchema has an object root (2025-06-18 server/tools §Output
// Schema), get nullable and map results as text only. Every list and result
// is checked against the official schema of its revision.
func TestStructuredContentHasSchema(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	core.AddTool(srv, &core.Tool{Name: "struct"}, func(context.Context, *core.CallToolRequest, noArgs) (point, error) { return point{1, 2}, nil })
	core.AddTool(srv, &core.Tool{Name: "ptr"}, func(context.Context, *core.CallToolRequest, noArgs) (*point, error) { return &point{1, 2}, nil })
	core.AddTool(srv, &core.Tool{Name: "nilptr"}, func(context.Context, *core.CallToolRequest, noArgs) (*point, error) { return nil, nil })
	core.AddTool(srv, &core.Tool{Name: "map"}, func(context.Context, *core.CallToolRequest, noArgs) (map[string]int, error) {
		return map[string]int{"a": 1}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "anymap"}, func(context.Context, *core.CallToolRequest, noArgs) (map[string]any, error) {
		return map[string]any{"a": "b"}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "slice"}, func(context.Context, *core.CallToolRequest, noArgs) ([]point, error) { return []point{{1, 2}}, nil })
	core.AddTool(srv, &core.Tool{Name: "int"}, func(context.Context, *core.CallToolRequest, noArgs) (int, error) { return 7, nil })
	core.AddTool(srv, &core.Tool{Name: "string"}, func(context.Context, *core.CallToolRequest, noArgs) (string, error) { return "s", nil })
	core.AddTool(srv, &core.Tool{Name: "any_object"}, func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
		return map[string]any{"k": "v"}, nil
	})
	core.AddTool(srv, &core.Tool{Name: "any_array"}, func(context.Context, *core.CallToolRequest, noArgs) (any, error) { return []any{"x", 1}, nil })
	core.AddTool(srv, &core.Tool{Name: "interface"}, func(context.Context, *core.CallToolRequest, noArgs) (shape, error) { return square{3}, nil })
	core.AddTool(srv, &core.Tool{Name: "rawjson"}, func(context.Context, *core.CallToolRequest, noArgs) (json.RawMessage, error) {
		return json.RawMessage(`{"a":1}`), nil
	})
	core.AddTool(srv, &core.Tool{Name: "any_with_schema", OutputSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`)},
		func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
			return map[string]any{"k": "v"}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "required_any_with_schema", OutputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *core.CallToolRequest, noArgs) (shape, error) { return square{2}, nil }, &core.ToolOptions{StructuredOutput: core.OutputRequired})

	// structured: the tools whose results carry structuredContent, per era.
	modernStructured := []string{"any_with_schema", "anymap", "int", "map", "nilptr", "ptr", "required_any_with_schema", "slice", "string", "struct"}
	legacyStructured := []string{"any_with_schema", "required_any_with_schema", "struct"}
	for _, c := range []struct {
		version, rev string
		structured   []string
	}{
		{modernVersion, modernVersion, modernStructured},
		{core.ProtocolVersion20251125, core.ProtocolVersion20251125, legacyStructured},
		{core.ProtocolVersion20250618, core.ProtocolVersion20251125, legacyStructured},
		{core.ProtocolVersion20250326, core.ProtocolVersion20251125, nil},
	} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			req := func(method string, params map[string]any) *testReq { return mreq(1, method, params) }
			if c.version != modernVersion {
				sid := initialize(t, srv, c.version, nil, nil)
				v := c.version
				if v == core.ProtocolVersion20250326 {
					v = ""
				}
				req = func(method string, params map[string]any) *testReq { return lreq(1, method, params, v, sid) }
			}
			lr := req("tools/list", nil).do(t, srv)
			validateSpec(t, c.rev, "ListToolsResult", lr.resultRaw(t))
			schemas := map[string]any{}
			var names []string
			for _, tl := range at(lr.result(t), "tools").([]any) {
				name := str(at(tl, "name"))
				names = append(names, name)
				if os, ok := at(tl, "outputSchema").(map[string]any); ok {
					schemas[name] = os
				}
			}
			var structured []string
			for _, name := range names {
				r := req("tools/call", map[string]any{"name": name, "arguments": map[string]any{}}).do(t, srv)
				validateSpec(t, c.rev, "CallToolResult", r.resultRaw(t))
				raw := map[string]json.RawMessage{}
				json.Unmarshal(r.resultRaw(t), &raw)
				sc, present := raw["structuredContent"]
				if !present {
					continue
				}
				structured = append(structured, name)
				os, ok := schemas[name]
				if !ok {
					t.Errorf("%s: result carries structuredContent %s, but tools/list advertises no outputSchema", name, sc)
					continue
				}
				if err := validateAgainst(t, os, sc); err != nil {
					t.Errorf("%s: structuredContent %s does not conform to the advertised outputSchema %s: %v", name, sc, toJSON(t, os), err)
				}
			}
			if got, want := strings.Join(structured, " "), strings.Join(c.structured, " "); got != want {
				t.Errorf("tools with structuredContent: %s\nwant: %s", got, want)
			}
		})
	}
	t.Run("required", func(t *testing.T) {
		t.Parallel()
		for name, add := range map[string]func(*core.Server){
			"interface": func(s *core.Server) {
				core.AddTool(s, &core.Tool{Name: "required_interface"},
					func(context.Context, *core.CallToolRequest, noArgs) (shape, error) { return square{1}, nil }, &core.ToolOptions{StructuredOutput: core.OutputRequired})
			},
			"rawjson": func(s *core.Server) {
				core.AddTool(s, &core.Tool{Name: "required_rawjson"},
					func(context.Context, *core.CallToolRequest, noArgs) (json.RawMessage, error) { return nil, nil }, &core.ToolOptions{StructuredOutput: core.OutputRequired})
			},
		} {
			msg := mustPanic(t, func() { add(core.NewServer(testImpl, nil)) })
			if !strings.Contains(msg, `"required_`+name+`"`) || !strings.Contains(msg, "OutputSchema") {
				t.Errorf("%s: panic %q does not name the tool and say an OutputSchema is needed", name, msg)
			}
		}
		// An outputSchema is a JSON object in every revision's schema.
		msg := mustPanic(t, func() {
			core.AddTool(core.NewServer(testImpl, nil), &core.Tool{Name: "bool_schema", OutputSchema: json.RawMessage(`true`)},
				func(context.Context, *core.CallToolRequest, noArgs) (any, error) { return 1, nil })
		})
		if !strings.Contains(msg, `"bool_schema"`) {
			t.Errorf("panic %q does not name the tool", msg)
		}
	})
}
