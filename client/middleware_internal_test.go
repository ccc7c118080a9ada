package client

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpfn/mcpfn/mcp"
)

var isErrorSeeds = []string{
	`{"content":[],"isError":true}`,
	`{"isError":false}`,
	`{ "isError" : true , "content" : [ {"type":"text","text":"\"isError\":true"} ] }`,
	`{"structuredContent":{"isError":true},"isError":false}`,
	`{"isError":true,"isError":false}`,
	`{"isError":true,"isError":null}`,
	`{"ISERROR":true}`,
	`{"is\u0045rror":true}`,
	`{"iſError":true}`,
	`{"isError":"yes"}`,
	`{"a":1,"b":[1,{"c":"}"}],"isError":true}`,
	`{}`,
	`{"isError":true`,
	`[true]`,
	`{"isError":true} x`,
	``,
}

// FuzzIsErrorOf: the scan that gives Outcome.IsError agrees with
// encoding/json, which decodes the result the caller gets, on every valid
// JSON input, and survives any other.
func FuzzIsErrorOf(f *testing.F) {
	for _, s := range isErrorSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w struct {
			IsError bool `json:"isError"`
		}
		got := isErrorOf(b) // any input: no panic, no endless loop
		if json.Unmarshal(b, &w) == nil && got != w.IsError {
			t.Fatalf("isErrorOf(%q) = %v, encoding/json %v", b, got, w.IsError)
		}
	})
}

// BenchmarkMiddlewareSeam: what one identity middleware adds to a
// 2026-07-28 tools/call, without the network: the Call, its Meta, the
// chain, the check that Meta is unchanged and the Outcome with isError.
// Set beside BenchmarkCallTool's round trip it gives the seam's share.
func BenchmarkMiddlewareSeam(b *testing.B) {
	cl := New(&Options{Middleware: []Middleware{func(next Handler) Handler {
		return func(ctx context.Context, c *Call) (*Outcome, error) { return next(ctx, c) }
	}}})
	c, err := cl.newConn("http://127.0.0.1/mcp")
	if err != nil {
		b.Fatal(err)
	}
	p := newModern(c, mcp.ProtocolVersion20260728, false)
	c.era = p
	res := json.RawMessage(`{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5},"resultType":"complete"}`)
	r := &request{method: "tools/call", params: params{{"name", quoteJSON("add")}, {"arguments", json.RawMessage(`{"a":2,"b":3}`)}}}
	ctx := context.Background()
	// What modernEra.sendCall does but send itself; built once, as
	// the modern path needs no closure per Call.
	send := func(ctx context.Context, call *Call) (*Outcome, error) {
		r2 := *call.req
		r2.mwHeader = call.Header
		if !p.meta.unchanged(call.Meta) {
			r2.meta = encodeMeta(call.Meta)
		}
		_ = r2
		return call.outcome(res, resultComplete), nil
	}
	b.ReportAllocs()
	for b.Loop() {
		call := &Call{Method: r.method, Target: targetOf(r.method, r.params), Version: p.v, Modern: true,
			Meta: p.meta.clone(p.metaBase), req: r}
		out, err := c.intercept(ctx, call, send)
		if err != nil || out.IsError {
			b.Fatal(err)
		}
	}
}
