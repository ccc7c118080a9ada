package core_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

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
