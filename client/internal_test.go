package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unique"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/core"
)

func TestSSEReader(t *testing.T) {
	t.Parallel()
	in := ": comment\r\n" +
		"id: 1\nretry: 500\ndata:\n\n" + // priming: not dispatched
		"data: {\"a\":1}\n\n" +
		"event: message\ndata: x\ndata: y\r\n\r\n" +
		"event: other\rdata: z\r\r" +
		"id: 7\ndata:no-space\n\n" +
		"data: unterminated"
	r := newSSEReader(strings.NewReader(in), 1<<10)
	var got []string
	for {
		ev, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Event+"|"+ev.ID+"|"+string(ev.Data))
	}
	want := []string{`|1|{"a":1}`, "message|1|x\ny", "other|1|z", "|7|no-space"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q", got)
	}
	if r.retry != 500*time.Millisecond || r.lastID != "7" {
		t.Fatalf("retry %v lastID %q", r.retry, r.lastID)
	}
	// One event is bounded.
	r = newSSEReader(strings.NewReader("data: "+strings.Repeat("x", 2000)+"\n\n"), 1000)
	if _, err := r.next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v", err)
	}
	r = newSSEReader(strings.NewReader(strings.Repeat("data: xxxxxxxx\n", 200)+"\n"), 1000)
	if _, err := r.next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("many lines: err = %v", err)
	}
}

func TestParseToolHeaders(t *testing.T) {
	t.Parallel()
	valid := []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string","x-mcp-header":"K"}}}}}`,
		// A property named x-mcp-header is not an annotation.
		`{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`,
		`{"type":"object","properties":{"e":{"type":"string","enum":[{"x-mcp-header":"v"}]}}}`,
	}
	for _, s := range valid {
		if _, err := parseToolHeaders(json.RawMessage(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	invalid := []string{
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`,
		`{"type":"object","properties":{"v":{"type":"object","x-mcp-header":"D"}}}`,
		`{"type":"object","properties":{"v":{"type":"array","items":{"type":"string"},"x-mcp-header":"I"}}}`,
		`{"type":"object","properties":{"v":{"type":"null","x-mcp-header":"N"}}}`,
		`{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"F"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"R"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"a b"}}}`,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"a:b"}}}`,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"a\u0001b"}}}`,
		`{"type":"object","properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}`,
		`{"type":"object","properties":{"v":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`,
		`{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"v":{"$ref":"#/$defs/d"}}}`,
		`{"type":"string","x-mcp-header":"Root"}`,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":7}}}`,
	}
	for _, s := range invalid {
		if _, err := parseToolHeaders(json.RawMessage(s)); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}

func TestDecodeMessage(t *testing.T) {
	t.Parallel()
	ok := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}
	for _, s := range ok {
		if _, err := decodeMessage([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := []string{
		``, `[]`, `{"id":1,"result":{}}`, `{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":[]}`,
		`{"jsonrpc":"2.0","result":{}}`,
	}
	for _, s := range bad {
		if _, err := decodeMessage([]byte(s)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestResultType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`{}`: "complete", `{"resultType":"complete"}`: "complete", `{"resultType":"input_required"}`: "input_required",
		// The Tasks extension's CreateTaskResult (SEP-2663); whether a
		// request may get one is the caller's check (TestTaskNotDeclared).
		`{"resultType":"task"}`: "task"} {
		if got, err := resultTypeOf(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	for _, in := range []string{`{"resultType":"tasks"}`, `{"resultType":"working"}`, `{"resultType":""}`} {
		if _, err := resultTypeOf(json.RawMessage(in)); !errors.Is(err, ErrProtocol) {
			t.Fatalf("unknown resultType %s: %v", in, err)
		}
	}
}

func TestParseInputRequiredOrder(t *testing.T) {
	t.Parallel()
	ir, err := parseInputRequired(json.RawMessage(`{"resultType":"input_required","inputRequests":{"z":{"method":"roots/list"},"a":{"method":"elicitation/create","params":{}}},"requestState":"s\u0041"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ir.keys) != 2 || ir.keys[0] != "z" || ir.keys[1] != "a" || ir.requests["z"].Method != "roots/list" || string(ir.requests["a"].Params.(json.RawMessage)) != `{}` {
		t.Fatalf("order %v %v", ir.keys, ir.requests)
	}
	if string(ir.state) != `"s\u0041"` {
		t.Fatalf("requestState not kept byte for byte: %s", ir.state)
	}
	if _, err := parseInputRequired(json.RawMessage(`{"resultType":"input_required"}`)); !errors.Is(err, ErrProtocol) {
		t.Fatal("empty input_required accepted")
	}
}

func TestCacheBounds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ep := unique.Make("http://a.test/mcp")
		c := newCache(2, time.Minute)
		res := func(ttl string) json.RawMessage {
			return json.RawMessage(`{"ttlMs":` + ttl + `,"cacheScope":"public"}`)
		}
		c.put(ep, "tools/list", "a", credNone, 0, res("1000"))
		c.put(ep, "tools/list", "b", credNone, 0, res("1000"))
		c.get(ep, "tools/list", "a", credNone)
		c.put(ep, "tools/list", "c", credNone, 0, res("1000")) // evicts b, the least recently used
		if _, ok := c.get(ep, "tools/list", "b", credNone); ok || c.len() != 2 {
			t.Fatal("LRU bound")
		}
		c.put(ep, "x", "neg", credNone, 0, res("-5"))
		c.put(ep, "x", "abs", credNone, 0, json.RawMessage(`{}`))
		if _, ok := c.get(ep, "x", "neg", credNone); ok {
			t.Fatal("negative ttl cached")
		}
		c.put(ep, "x", "long", credNone, 0, res("99999999999"))
		time.Sleep(time.Minute)
		if _, ok := c.get(ep, "x", "long", credNone); ok {
			t.Fatal("MaxTTL not applied")
		}
		// Fresh while now < received + ttl.
		c.put(ep, "x", "edge", credNone, 0, res("1000"))
		time.Sleep(time.Second - time.Nanosecond)
		if _, ok := c.get(ep, "x", "edge", credNone); !ok {
			t.Fatal("stale before received + ttl")
		}
		time.Sleep(time.Nanosecond)
		if _, ok := c.get(ep, "x", "edge", credNone); ok {
			t.Fatal("fresh at received + ttl")
		}
	})
}

// TestCachePrivateScopes: a private entry is served to its credential
// source only; a drop of the private entries starts a new generation, and
// an answer to a request sent before it is not stored. Entries belong to
// their endpoint.
func TestCachePrivateScopes(t *testing.T) {
	t.Parallel()
	ep, other := unique.Make("http://a.test/mcp"), unique.Make("http://a.test/other")
	c := newCache(8, time.Minute)
	priv := json.RawMessage(`{"ttlMs":1000,"cacheScope":"private"}`)
	c.put(ep, "tools/list", "", credToken, 0, priv)
	if _, ok := c.get(ep, "tools/list", "", credToken); !ok {
		t.Fatal("private entry not served to its source")
	}
	for _, src := range []credSource{credNone, credStatic} {
		if _, ok := c.get(ep, "tools/list", "", src); ok {
			t.Fatalf("private entry of the token source served to source %d", src)
		}
	}
	if _, ok := c.get(other, "tools/list", "", credToken); ok {
		t.Fatal("an endpoint's entry served for another endpoint")
	}
	gen := c.generation()
	c.dropPrivate()
	if _, ok := c.get(ep, "tools/list", "", credToken); ok {
		t.Fatal("private entry survived dropPrivate")
	}
	c.put(ep, "tools/list", "", credToken, gen, priv) // sent before the drop
	if _, ok := c.get(ep, "tools/list", "", credToken); ok {
		t.Fatal("an answer from before the drop was stored")
	}
	c.put(ep, "tools/list", "", credToken, c.generation(), priv)
	if _, ok := c.get(ep, "tools/list", "", credToken); !ok {
		t.Fatal("an answer after the drop was not stored")
	}
	// Public entries do not care about generations or sources.
	c.put(ep, "resources/read", "u", credToken, gen, json.RawMessage(`{"ttlMs":1000,"cacheScope":"public"}`))
	if _, ok := c.get(ep, "resources/read", "u", credNone); !ok {
		t.Fatal("public entry not shared")
	}
	// A list change at one endpoint drops its pages only.
	c.put(other, "tools/list", "", credToken, c.generation(), priv)
	c.dropMethod(ep, "tools/list", "")
	if _, ok := c.get(ep, "tools/list", "", credToken); ok {
		t.Fatal("dropMethod left the endpoint's page")
	}
	if _, ok := c.get(other, "tools/list", "", credToken); !ok {
		t.Fatal("dropMethod of one endpoint dropped another's page")
	}
}

// TestEraMemory: the era memory is an LRU of bounded size (MaxEras in a
// Client).
func TestEraMemory(t *testing.T) {
	t.Parallel()
	var m eraMemory
	m.init(2)
	m.remember("a", true)
	m.remember("b", false)
	if modern, ok := m.get("a"); !ok || !modern { // a is now the most recent
		t.Fatal("a not remembered as modern")
	}
	m.remember("c", true) // evicts b
	if _, ok := m.get("b"); ok || m.len() != 2 {
		t.Fatalf("LRU bound: b kept, %d entries", m.len())
	}
	m.remember("a", false)
	if modern, ok := m.get("a"); !ok || modern {
		t.Fatal("a's new era not recorded")
	}
	m.forget("a")
	if _, ok := m.get("a"); ok || m.len() != 1 {
		t.Fatal("forget")
	}
	if cl := New(nil); cl.eras.max != MaxEras {
		t.Fatalf("a Client remembers %d eras, want MaxEras", cl.eras.max)
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: {}\n\n"))
	f.Add([]byte("id: 1\r\nretry: 10\r\ndata:\r\n\r\n:c\rdata: x\r\r"))
	f.Add([]byte("event: a\ndata: 1\ndata: 2\n\nid\n\nretry: 99999999999999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newSSEReader(bytes.NewReader(b), 256)
		for range len(b) + 1 {
			ev, err := r.next()
			if err != nil {
				return
			}
			if len(ev.Data) > 256 {
				t.Fatalf("event of %d bytes past the bound", len(ev.Data))
			}
		}
		t.Fatal("more events than input bytes")
	})
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"m","data":{"supported":["2026-07-28"]}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if m.isResponse() {
			if m.Error != nil {
				_ = rpcError("m", 400, m.Error).Error()
				return
			}
			if rt, err := resultTypeOf(m.Result); err == nil && rt == resultInputRequired {
				parseInputRequired(m.Result)
			}
		}
	})
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "ctl\x01", "ü", "<&>", "\x7f"} {
		got := appendJSONString(nil, s)
		want, _ := json.Marshal(s)
		if string(got) != string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}

// TestLearnHeadersByteBound: the walk that looks for a tool's declarations
// stops after maxHeaderBytes of tool definitions, however few pages that
// is (the bound is lowered here: the real one is 8 MiB).
func TestLearnHeadersByteBound(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "big", Version: "1"}, &core.ServerOptions{PageSize: 1})
	big := strings.Repeat("x", 100<<10)
	for i := range 4 {
		core.AddTool(srv, &core.Tool{Name: fmt.Sprintf("a%d", i), Description: big}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return "ok", nil
		})
	}
	var lists atomic.Int32
	h := nethttp.Handler(srv)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" {
			lists.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := New(&Options{Mode: ModeModern}).Connect(context.Background(), ts.URL+nethttp.DefaultPath)
	if err != nil {
		t.Fatal(err)
	}
	p := c.era.(*modernEra)
	p.decls.maxBytes = 150 << 10
	if err := p.learnHeaders(context.Background(), "missing", nil); err != nil {
		t.Fatal(err)
	}
	if n := lists.Load(); n != 2 {
		t.Fatalf("tools/list %d times, want 2 (100 KiB each, 150 KiB bound)", n)
	}
	if _, known, _ := p.decls.paramHeaders("missing", nil); !known {
		t.Fatal("the walk's verdict was not kept")
	}
}
