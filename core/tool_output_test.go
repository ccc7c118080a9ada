package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// schemaNeedsA is an output schema that requires the string member "a".
const schemaNeedsA = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`

// secret is a value a non-conforming result holds: it may reach the log,
// never the client.
const secret = "secret-value-4711"

type positive struct {
	N int `json:"n" jsonschema:"minimum=1"`
}

// outputServer has tools whose results do or do not conform to their
// declared output schemas.
func outputServer(t *testing.T, o *core.ServerOptions) (*core.Server, *mcptest.LogBuffer) {
	t.Helper()
	logs := &mcptest.LogBuffer{}
	if o == nil {
		o = &core.ServerOptions{}
	}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv := core.NewServer(testImpl, o)
	t.Cleanup(func() { srv.Close() })
	needsA := json.RawMessage(schemaNeedsA)
	core.AddTool(srv, &core.Tool{Name: "typed_ok", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
			return map[string]any{"a": "fine"}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "typed_bad", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
			return map[string]any{"b": secret}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "typed_wrong_type", OutputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)},
		func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
			return map[string]any{"a": secret}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "raw_bad", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "{}"}},
				StructuredContent: map[string]any{"b": secret}}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "raw_missing", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: secret}}}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "raw_is_error", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "it failed"}}, IsError: true}, nil
		})
	core.AddTool(srv, &core.Tool{Name: "derived_bound"},
		func(context.Context, *core.CallToolRequest, noArgs) (positive, error) { return positive{N: 0}, nil })
	core.AddTool(srv, &core.Tool{Name: "derived_bound_ok"},
		func(context.Context, *core.CallToolRequest, noArgs) (positive, error) { return positive{N: 3}, nil })
	core.AddTool(srv, &core.Tool{Name: "skipped", OutputSchema: needsA},
		func(context.Context, *core.CallToolRequest, noArgs) (any, error) {
			return map[string]any{"b": "unchecked"}, nil
		},
		&core.ToolOptions{SkipOutputValidation: true})
	return srv, logs
}

// TestOutputSchemaEnforced checks that a result whose structuredContent
// does not conform to the tool's outputSchema never reaches the client
// (2026-07-28 server/tools, "Output Schema": servers MUST provide
// structured results that conform to it; 2025-06-18 and 2025-11-25 say
// the same): in both eras it is a -32603 whose message names the tool, the
// schema location and the failed keyword but no value of the result, and
// the operator's log gets the validator's detail. Conforming results,
// isError results and a tool that opted out pass as they are.
func TestOutputSchemaEnforced(t *testing.T) {
	t.Parallel()
	srv, logs := outputServer(t, nil)
	sid := initialize(t, srv, core.ProtocolVersion20251125, nil, nil)
	sid0618 := initialize(t, srv, core.ProtocolVersion20250618, nil, nil)
	eras := map[string]func(tool string) *testReq{
		"2026-07-28": func(tool string) *testReq { return callReq(1, tool, nil) },
		"2025-11-25": func(tool string) *testReq {
			return lreq(1, "tools/call", map[string]any{"name": tool}, core.ProtocolVersion20251125, sid)
		},
		"2025-06-18": func(tool string) *testReq {
			return lreq(1, "tools/call", map[string]any{"name": tool}, core.ProtocolVersion20250618, sid0618)
		},
	}
	for era, call := range eras {
		t.Run(era, func(t *testing.T) {
			for _, c := range []struct {
				tool, keyword, location string
			}{
				{"typed_bad", "required", "/required"},
				{"typed_wrong_type", "type", "/properties/a/type"},
				{"raw_bad", "required", "/required"},
				{"raw_missing", "structuredContent", ""},
				{"derived_bound", "minimum", "/properties/n/minimum"},
			} {
				r := call(c.tool).do(t, srv)
				e := r.wantError(t, http.StatusOK, core.CodeInternalError)
				msg := str(e["message"])
				for _, want := range []string{`"` + c.tool + `"`, "outputSchema", c.keyword, c.location} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: message %q does not say %q", c.tool, msg, want)
					}
				}
				if bytes.Contains(r.Body, []byte(secret)) {
					t.Errorf("%s: the response holds a value of the result: %s", c.tool, r.Body)
				}
				if at(e, "data", "reason") != "output_schema_mismatch" {
					t.Errorf("%s: data = %v, want reason output_schema_mismatch", c.tool, e["data"])
				}
			}
			for tool, want := range map[string]string{"typed_ok": `{"a":"fine"}`, "derived_bound_ok": `{"n":3}`, "skipped": `{"b":"unchecked"}`} {
				r := call(tool).do(t, srv)
				raw := map[string]json.RawMessage{}
				json.Unmarshal(r.resultRaw(t), &raw)
				if !jsonEq(t, raw["structuredContent"], []byte(want)) {
					t.Errorf("%s: structuredContent = %s, want %s", tool, raw["structuredContent"], want)
				}
			}
			if res := call("raw_is_error").do(t, srv).result(t); res["isError"] != true {
				t.Errorf("raw_is_error: %v, want the isError result", res)
			}
		})
	}
	log := logs.String()
	for _, want := range []string{"typed_bad", "derived_bound", "outputSchema", "minimum"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not name %q:\n%s", want, log)
		}
	}
}

// TestOutputSchemaEnforcedAdvanced checks advanced mode: a CallToolHandler
// result that breaks the listed tool's outputSchema is -32603 in both eras,
// and ServerOptions.SkipOutputValidation sends it as it is.
func TestOutputSchemaEnforcedAdvanced(t *testing.T) {
	t.Parallel()
	for _, skip := range []bool{false, true} {
		o := &core.ServerOptions{
			SkipOutputValidation: skip,
			ListToolsHandler: func(context.Context, *core.ListToolsRequest) (*core.ListToolsResult, error) {
				return &core.ListToolsResult{Tools: []*core.Tool{
					{Name: "adv", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(schemaNeedsA)},
				}}, nil
			},
			CallToolHandler: func(context.Context, *core.CallToolRequest) (*core.CallToolResult, error) {
				return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "{}"}},
					StructuredContent: json.RawMessage(`{"b":"` + secret + `"}`)}, nil
			},
		}
		srv, _ := outputServer(t, o)
		sid := initialize(t, srv, core.ProtocolVersion20251125, nil, nil)
		for _, r := range []*testReq{
			callReq(1, "adv", nil),
			lreq(1, "tools/call", map[string]any{"name": "adv"}, core.ProtocolVersion20251125, sid),
		} {
			resp := r.do(t, srv)
			if skip {
				if !bytes.Contains(resp.resultRaw(t), []byte(secret)) {
					t.Errorf("SkipOutputValidation: the result was not sent as it is: %s", resp.Body)
				}
				continue
			}
			e := resp.wantError(t, http.StatusOK, core.CodeInternalError)
			if msg := str(e["message"]); !strings.Contains(msg, `"adv"`) || !strings.Contains(msg, "required") {
				t.Errorf("message %q does not name the tool and the keyword", msg)
			}
			if bytes.Contains(resp.Body, []byte(secret)) {
				t.Errorf("the response holds a value of the result: %s", resp.Body)
			}
		}
	}
}

// TestOutputSchemaEnforcedInTask checks that a task's result is held to
// the same rule: the task fails with the -32603 instead of completing with
// a non-conforming result for tasks/get to hand out.
func TestOutputSchemaEnforcedInTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		core.AddTool(f.srv, &core.Tool{Name: "bad_task", OutputSchema: json.RawMessage(schemaNeedsA)},
			func(context.Context, *core.CallToolRequest, struct{}) (any, error) {
				return map[string]any{"b": secret}, nil
			},
			&core.ToolOptions{TaskSupport: core.TaskOptional})
		res := f.await(t, f.create(t, "bad_task", nil), "failed")
		if num(t, at(res, "error", "code")) != core.CodeInternalError || has(res, "result") {
			t.Fatalf("task = %v, want failed with -32603", res)
		}
		if msg := str(at(res, "error", "message")); !strings.Contains(msg, "required") || strings.Contains(msg, secret) {
			t.Errorf("task error message %q", msg)
		}
	})
}

type outInner struct {
	X int `json:"x"`
}

type OutEmbedded struct {
	E string `json:"e"`
}

type outDeep struct {
	D int `json:"d"`
}

// outShapes has a field of every shape whose encoding a derived schema
// must describe: nil slices, maps and pointers encode as null, []byte as
// base64 (null when nil), json.Number as a number, map[int] keys may be
// negative, url.URL and netip.Addr encode their own way, and the fields
// of a nil embedded pointer are left out.
type outShapes struct {
	List    []string          `json:"list"`
	Map     map[string]int    `json:"map"`
	Ptr     *int              `json:"ptr"`
	Obj     *outInner         `json:"obj"`
	Bytes   []byte            `json:"bytes"`
	Num     json.Number       `json:"num"`
	Keys    map[int]string    `json:"keys"`
	Nested  [][]*outInner     `json:"nested"`
	Values  map[string][]int  `json:"values"`
	When    time.Time         `json:"when"`
	Raw     json.RawMessage   `json:"raw"`
	URL     url.URL           `json:"url"`
	Addr    netip.Addr        `json:"addr"`
	Opt     string            `json:"opt,omitempty"`
	Any     any               `json:"any"`
	Arr     [2]*outInner      `json:"arr"`
	Nilable *string           `json:"nilable" jsonschema:"nullable"`
	Str     *int              `json:"str,string"`
	Items   []map[string]*int `json:"items"`
	*OutEmbedded
	outDeep
}

// TestDerivedOutputSchemaFitsEncoding checks that a typed tool's derived
// outputSchema accepts what the server sends for every shape of its result
// type, the zero value (nil everywhere) and a full one alike: the typed
// fast path sends results without validating them, so the derivation
// itself must be right.
func TestDerivedOutputSchemaFitsEncoding(t *testing.T) {
	t.Parallel()
	one, word := 1, "w"
	full := outShapes{
		List: []string{"a"}, Map: map[string]int{"k": 1}, Ptr: &one, Obj: &outInner{2},
		Bytes: []byte("xyz"), Num: "12.5", Keys: map[int]string{-3: "minus", 4: "four"},
		Nested: [][]*outInner{{nil, {1}}, nil}, Values: map[string][]int{"n": nil, "v": {1}},
		When: time.Date(2026, 7, 28, 1, 2, 3, 4, time.UTC), Raw: json.RawMessage(`[1,"x"]`),
		URL: url.URL{Scheme: "https", Host: "example.com"}, Addr: netip.MustParseAddr("::1"),
		Opt: "o", Any: []any{1}, Arr: [2]*outInner{{1}, nil}, Nilable: &word, Str: &one,
		Items: []map[string]*int{nil, {"a": nil, "b": &one}}, OutEmbedded: &OutEmbedded{E: "e"}, outDeep: outDeep{D: 5},
	}
	srv := core.NewServer(testImpl, nil)
	for name, v := range map[string]outShapes{"zero": {}, "full": full} {
		core.AddTool(srv, &core.Tool{Name: name}, func(context.Context, *core.CallToolRequest, noArgs) (outShapes, error) { return v, nil })
		core.AddTool(srv, &core.Tool{Name: name + "_ptr"}, func(context.Context, *core.CallToolRequest, noArgs) (*outShapes, error) { return &v, nil })
		core.AddTool(srv, &core.Tool{Name: name + "_slice"}, func(context.Context, *core.CallToolRequest, noArgs) ([]outShapes, error) {
			return []outShapes{v}, nil
		})
		core.AddTool(srv, &core.Tool{Name: name + "_map"}, func(context.Context, *core.CallToolRequest, noArgs) (map[string]*outShapes, error) {
			return map[string]*outShapes{"v": &v, "nil": nil}, nil
		})
	}
	core.AddTool(srv, &core.Tool{Name: "nil_slice"}, func(context.Context, *core.CallToolRequest, noArgs) ([]outShapes, error) { return nil, nil })
	tools := listTools(t, srv)
	for name := range tools {
		t.Run(name, func(t *testing.T) {
			os, ok := tools[name]["outputSchema"]
			if !ok {
				t.Fatalf("no outputSchema listed")
			}
			r := callReq(1, name, nil).do(t, srv)
			raw := map[string]json.RawMessage{}
			json.Unmarshal(r.resultRaw(t), &raw)
			sc, ok := raw["structuredContent"]
			if !ok {
				t.Fatalf("no structuredContent: %s", r.Body)
			}
			if err := validateAgainst(t, os, sc); err != nil {
				t.Errorf("structuredContent %s does not conform to the derived outputSchema %s: %v", sc, toJSON(t, os), err)
			}
		})
	}
}

// report is a typed result whose derived schema is exact: nil slices,
// maps and pointers are described as null.
type report struct {
	Title string         `json:"title" jsonschema:"description=The title"`
	Tags  []string       `json:"tags"`
	Stats map[string]int `json:"stats"`
	Next  *outInner      `json:"next"`
}

// TestTypedOutputFastPath proves that a typed tool whose outputSchema is
// derived from its result type alone pays nothing for output validation:
// a call allocates exactly as much as the same tool with validation
// skipped, while the same result checked against a supplied schema costs
// more (the check runs). Budgets: TestRequestAllocations.
func TestTypedOutputFastPath(t *testing.T) {
	srv := core.NewServer(testImpl, quietBench())
	h := func(context.Context, *core.CallToolRequest, noArgs) (report, error) {
		return report{Title: "t", Stats: map[string]int{"a": 1}}, nil
	}
	core.AddTool(srv, &core.Tool{Name: "derived"}, h)
	core.AddTool(srv, &core.Tool{Name: "skipped"}, h, &core.ToolOptions{SkipOutputValidation: true})
	core.AddTool(srv, &core.Tool{Name: "checked", OutputSchema: json.RawMessage(
		`{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":["array","null"]},"stats":{"type":["object","null"],"additionalProperties":{"type":"integer"}},"next":{"type":["object","null"]}},"required":["title","tags","stats","next"],"additionalProperties":false}`)}, h)
	allocs := map[string]float64{}
	for _, name := range []string{"derived", "skipped", "checked"} {
		br := newBenchRequest(callReq(1, name, nil))
		w := &mcptest.DiscardWriter{}
		allocs[name] = testing.AllocsPerRun(200, func() { br.serve(srv, w) })
		if !bytes.Contains(w.Body.Bytes(), []byte(`"structuredContent":{"title":"t","tags":null,"stats":{"a":1},"next":null}`)) {
			t.Fatalf("%s: HTTP %d %s", name, w.Status, w.Body.Bytes())
		}
	}
	if allocs["derived"] != allocs["skipped"] {
		t.Errorf("a derived outputSchema costs %v allocations per call, skipping validation %v: the derived one is validated", allocs["derived"], allocs["skipped"])
	}
	if allocs["checked"] <= allocs["skipped"] {
		t.Errorf("a supplied outputSchema costs %v allocations per call, skipping validation %v: the check did not run", allocs["checked"], allocs["skipped"])
	}
	t.Logf("allocations per call: %v", allocs)
}

// BenchmarkOutputValidation compares a typed tools/call whose result goes
// out unchecked (derived schema) with the same result checked against a
// supplied outputSchema, by the fast path (simple schema) or the full
// validator.
func BenchmarkOutputValidation(b *testing.B) {
	srv := core.NewServer(testImpl, quietBench())
	h := func(context.Context, *core.CallToolRequest, noArgs) (report, error) {
		return report{Title: "t", Tags: []string{"a", "b"}, Stats: map[string]int{"a": 1}}, nil
	}
	core.AddTool(srv, &core.Tool{Name: "derived"}, h)
	core.AddTool(srv, &core.Tool{Name: "checked_fast", OutputSchema: json.RawMessage(
		`{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["title"]}`)}, h)
	core.AddTool(srv, &core.Tool{Name: "checked_full", OutputSchema: json.RawMessage(
		`{"type":"object","properties":{"title":{"type":"string"},"stats":{"type":"object","additionalProperties":{"type":"integer"}}},"required":["title"]}`)}, h)
	for _, name := range []string{"derived", "checked_fast", "checked_full"} {
		b.Run(name, func(b *testing.B) {
			benchServe(b, srv, callReq(1, name, nil), wantStatus(b, 200, `"structuredContent"`))
		})
	}
}
