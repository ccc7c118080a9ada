package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
)

// rawArgs is a tools/call or prompts/get whose arguments are the given raw
// JSON (so that duplicate keys survive).
func rawArgs(t testing.TB, method, name, args string) *testReq {
	t.Helper()
	var r *testReq
	if method == "tools/call" {
		r = callReq(1, name, map[string]any{})
	} else {
		r = mreq(1, method, map[string]any{"name": name})
	}
	// json.Marshal keeps a RawMessage's duplicate keys.
	return r.withCaps(map[string]any{"elicitation": map[string]any{}}).withParam("arguments", json.RawMessage(args))
}

// bigObject returns a JSON object of n distinct string members.
func bigObject(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"v"`, i)
	}
	b.WriteByte('}')
	return b.String()
}

// TestHostilePromptArguments is issue 11, defect 2: a prompts/get with
// 100,000 distinct argument keys on a prompt that asks for input made the
// server canonicalize them with a per-key scan (23 s of CPU). It is now
// refused with -32602 before any work; 10,000 keys (the limit) are served.
// The cost of canonicalization itself is bounded in TestCanonicalJSONCost.
func TestHostilePromptArguments(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(testImpl, nil)
	srv.AddPrompt(&core.Prompt{Name: "ask", Description: "Asks for a name."},
		func(ctx context.Context, req *core.GetPromptRequest) (*core.GetPromptResult, error) {
			return nil, core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("Name?", nameSchema)}, "")
		})
	r := rawArgs(t, "prompts/get", "ask", bigObject(100_000)).do(t, srv)
	e := r.wantError(t, http.StatusOK, core.CodeInvalidParams)
	if msg := str(e["message"]); !strings.Contains(msg, "more than 10000 members") {
		t.Fatalf("message %q", msg)
	}
	r = rawArgs(t, "prompts/get", "ask", bigObject(core.MaxArgumentMembers)).do(t, srv)
	if res := r.result(t); str(res["resultType"]) != "input_required" {
		t.Fatalf("10000 keys: %s", r.Body)
	}
	assertServes(t, newFixture(t, nil))
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

// TestArgumentsBindCaseSensitively is issue 11, defect 4: with a schema that
// allows additional properties, {"region":"us","REGION":"eu"} passed
// validation and the Mcp-Param-Region: us check, and encoding/json bound
// "eu" (a case-insensitive match) to the field the header vouched for. The
// handler must see exactly what was validated: "us".
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

// shortBody is a body that sends a few bytes of what it declared.
type shortBody struct{ sent bool }

func (b *shortBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, io.EOF
	}
	b.sent = true
	return copy(p, `{"jsonrpc"`), nil
}

// TestDeclaredBodySizeNotAllocated is issue 11, defect 3: the body buffer
// was allocated at the declared Content-Length before a byte arrived. A
// request that declares 4 MiB and sends 10 bytes must allocate little. Not
// parallel: it reads the process's allocation counter.
func TestDeclaredBodySizeNotAllocated(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	srv := newFixture(t, nil)
	const n, declared = 20, 4 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		req := callReq(1, "add", map[string]any{"a": 1, "b": 2}).httpRequest("/mcp")
		req.Body, req.ContentLength = io.NopCloser(&shortBody{}), declared
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest {
			t.Fatalf("HTTP %d: %s", w.Code, w.Body.Bytes())
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256<<10 {
		t.Fatalf("%d bytes allocated per request that declared %d and sent 10", per, declared)
	}
	assertServes(t, srv)
}
