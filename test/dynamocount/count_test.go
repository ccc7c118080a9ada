package dynamocount_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
	"github.com/mcpfn/mcpfn/test/replicas/proxy"
)

// counting is a dynamo.Client that counts the calls it passes on.
type counting struct {
	inner dynamo.Client
	mu    sync.Mutex
	n     calls
}

// calls counts DynamoDB calls by action.
type calls map[string]int

func (c calls) total() int {
	t := 0
	for _, n := range c {
		t += n
	}
	return t
}

func (c calls) String() string {
	if c.total() == 0 {
		return "none"
	}
	var parts []string
	for _, op := range []string{"GetItem", "UpdateItem", "PutItem", "DeleteItem", "Query"} {
		if c[op] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[op], op))
		}
	}
	return strings.Join(parts, " + ")
}

func (c *counting) count(op string) {
	c.mu.Lock()
	c.n[op]++
	c.mu.Unlock()
}

// take returns the calls since the last take.
func (c *counting) take() calls {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = calls{}
	return n
}

func (c *counting) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.inner.GetItem(ctx, in, o...)
}

func (c *counting) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.inner.PutItem(ctx, in, o...)
}

func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.inner.UpdateItem(ctx, in, o...)
}

func (c *counting) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.inner.DeleteItem(ctx, in, o...)
}

func (c *counting) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	return c.inner.Query(ctx, in, o...)
}

var stateKey = func() core.StaticKeys {
	b := make([]byte, 32)
	rand.Read(b)
	return core.StaticKeys{{ID: "k1", Secret: b}}
}()

type none struct{}

// newServer builds a server on store/dynamo through client, with a plain
// tool, a session tool and a tool that asks the user for input.
func newServer(tb testing.TB, client dynamo.Client, table string, edit func(*core.ServerOptions)) *core.Server {
	tb.Helper()
	store, err := dynamo.New(client, &dynamo.Options{TableName: table})
	if err != nil {
		tb.Fatal(err)
	}
	opts := &core.ServerOptions{SessionStore: store, Keys: stateKey}
	if edit != nil {
		edit(opts)
	}
	return addTools(core.NewServer(core.Implementation{Name: "dynamocount", Version: "1.0.0"}, opts))
}

func addTools(s *core.Server) *core.Server {
	core.AddTool(s, &core.Tool{Name: "echo", Description: "Returns its argument."},
		func(ctx context.Context, req *core.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	core.AddSessionTool(s, &core.Tool{Name: "counter", Description: "Adds to a counter in the session."},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in struct {
			Add int `json:"add"`
		}) (int, error) {
			return core.UpdateSessionValue(ctx, sess, "n", func(n int) (int, error) { return n + in.Add, nil })
		})
	core.AddTool(s, &core.Tool{Name: "confirm", Description: "Asks the user first."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
			if _, ok := req.Input.Elicitation("ok"); !ok {
				return "", core.InputRequired(core.InputRequests{"ok": core.ElicitForm("Sure?",
					json.RawMessage(`{"type":"object","properties":{}}`))}, "step-1")
			}
			return "confirmed " + req.Input.State(), nil
		})
	return s
}

func accept(string, json.RawMessage) (any, error) {
	return map[string]any{"action": "accept", "content": map[string]any{}}, nil
}

// ok returns a check that fails the test unless a request succeeded:
// ok(t, "what")(client.Call(...)).
func ok(t *testing.T, what string) func(*mcptest.Response, error) *mcptest.Response {
	return func(res *mcptest.Response, err error) *mcptest.Response {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Error != nil || (res.Status != http.StatusOK && res.Status != http.StatusAccepted && res.Status != http.StatusNoContent) {
			t.Fatalf("%s: HTTP %d, %+v", what, res.Status, res.Error)
		}
		return res
	}
}

// report collects the measured calls for the final log.
type report struct {
	t     *testing.T
	lines []string
}

// check records the calls of one request kind and asserts its budget:
// at most maxGet GetItem and maxUpdate UpdateItem, and exactly the other
// actions in others (absent ones must be zero).
func (r *report) check(kind string, got calls, maxGet, maxUpdate int, others calls) {
	r.t.Helper()
	r.lines = append(r.lines, fmt.Sprintf("  %-58s %s", kind, got))
	if got["GetItem"] > maxGet || got["UpdateItem"] > maxUpdate {
		r.t.Errorf("%s: %s, over the budget of %d GetItem and %d UpdateItem", kind, got, maxGet, maxUpdate)
	}
	for _, op := range []string{"PutItem", "DeleteItem", "Query"} {
		if got[op] != others[op] {
			r.t.Errorf("%s: %s, want %d %s", kind, got, others[op], op)
		}
	}
}

// TestCallsPerRequest counts the DynamoDB calls of each kind of request.
func TestCallsPerRequest(t *testing.T) {
	t.Parallel()
	db, table := dynalite.Table(t, "dynamocount-")
	cnt := &counting{inner: db, n: calls{}}
	hs := httptest.NewServer(newServer(t, cnt, table, nil))
	defer hs.Close()
	ctx := t.Context()
	rep := &report{t: t}

	// 2026-07-28: no session, no store.
	modern := &mcptest.Client{URL: hs.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
	cnt.take()
	ok(t, "server/discover")(modern.Call(ctx, "server/discover", nil, nil))
	ok(t, "tools/list")(modern.Call(ctx, "tools/list", nil, nil))
	ok(t, "tools/call")(modern.Call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, nil))
	res := ok(t, "MRTR round 1")(modern.Call(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}, nil))
	var round1 struct {
		RequestState string `json:"requestState"`
	}
	if err := res.Decode(&round1); err != nil || round1.RequestState == "" {
		t.Fatalf("MRTR round 1: %v %s", err, res.Result)
	}
	ok(t, "MRTR round 2")(modern.Call(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{},
		"inputResponses": map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{}}},
		"requestState":   round1.RequestState}, nil))
	if got := cnt.take(); got.total() != 0 {
		t.Errorf("2026-07-28 requests made DynamoDB calls: %s", got)
	}
	rep.check("2026-07-28 (discover, tools/list, tools/call, MRTR x2), each", calls{}, 0, 0, nil)

	// initialize, in a pool with a limit (the default 10000 anonymous).
	legacy := &mcptest.Client{URL: hs.URL}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "c", "version": "1"}}})
	res = ok(t, "initialize")(legacy.Post(ctx, body, nil, nil))
	legacy.SessionID, legacy.Version = res.Header.Get("Mcp-Session-Id"), "2025-11-25"
	rep.check("initialize (no eviction)", cnt.take(), 0, 0, calls{"PutItem": 1, "Query": 1})
	ok(t, "notifications/initialized")(legacy.Post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}, nil))
	rep.check("notifications/initialized", cnt.take(), 1, 1, nil)

	// Ordinary legacy requests: one read; a write only when they change
	// the session.
	ok(t, "tools/list")(legacy.LegacyCall(ctx, "tools/list", nil, nil))
	rep.check("legacy tools/list", cnt.take(), 1, 1, nil)
	ok(t, "tools/call")(legacy.LegacyCall(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, nil))
	rep.check("legacy tools/call (plain tool)", cnt.take(), 1, 1, nil)
	ok(t, "ping")(legacy.LegacyCall(ctx, "ping", nil, nil))
	rep.check("legacy ping", cnt.take(), 1, 1, nil)
	ok(t, "counter")(legacy.LegacyCall(ctx, "tools/call", map[string]any{"name": "counter", "arguments": map[string]any{"add": 1}}, nil))
	got := cnt.take()
	rep.check("legacy tools/call (session tool: read-modify-write)", got, 1, 1, nil)
	if got["UpdateItem"] != 1 {
		t.Errorf("the session tool's update made %s, want 1 UpdateItem", got)
	}
	ok(t, "logging/setLevel")(legacy.LegacyCall(ctx, "logging/setLevel", map[string]any{"level": "info"}, nil))
	rep.check("legacy logging/setLevel", cnt.take(), 1, 1, nil)

	// The bridge, answered on the same instance: the answer reaches the
	// waiting call in process; the waiting call polls the store meanwhile.
	start := time.Now()
	res = ok(t, "bridged call")(legacy.LegacyCall(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}, accept))
	wait := time.Since(start)
	if !strings.Contains(string(res.Result), "confirmed step-1") {
		t.Fatalf("bridged call: %s", res.Result)
	}
	got = cnt.take()
	rep.check(fmt.Sprintf("legacy bridged call + answer, one instance (%v)", wait.Round(time.Millisecond)), got, 2+int(wait/(250*time.Millisecond)), 1, nil)

	// DELETE.
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", legacy.SessionID)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	rep.check("DELETE (end the session)", cnt.take(), 1, 0, calls{"DeleteItem": 1})

	t.Logf("DynamoDB calls per request, store/dynamo on dynalite:\n%s", strings.Join(rep.lines, "\n"))
}

// TestCallsTouch shows the idle-expiry renewal: a request that changes
// nothing writes only when a tenth of the idle timeout has passed since the
// last write.
func TestCallsTouch(t *testing.T) {
	// Not parallel: a tools/list must follow the write within a tenth of the
	// idle timeout (real time, dynalite being a process), so this test runs
	// before the parallel ones start. The idle timeout is long enough (a
	// tenth is 2 s) that a loaded machine does not make the first request
	// late; the wait past a tenth can only make the second one later.
	db, table := dynalite.Table(t, "dynamocount-")
	cnt := &counting{inner: db, n: calls{}}
	hs := httptest.NewServer(newServer(t, cnt, table, func(o *core.ServerOptions) { o.SessionIdleTimeout = 20 * time.Second }))
	defer hs.Close()
	cl := &mcptest.Client{URL: hs.URL}
	if _, err := cl.Initialize(t.Context(), "2025-11-25", nil); err != nil {
		t.Fatal(err)
	}
	cnt.take()
	ok(t, "tools/list")(cl.LegacyCall(t.Context(), "tools/list", nil, nil))
	if got := cnt.take(); got["GetItem"] != 1 || got.total() != 1 {
		t.Errorf("tools/list right after a write: %s, want 1 GetItem", got)
	}
	time.Sleep(2100 * time.Millisecond) // > SessionIdleTimeout/10
	ok(t, "tools/list")(cl.LegacyCall(t.Context(), "tools/list", nil, nil))
	got := cnt.take()
	if got["GetItem"] != 1 || got["UpdateItem"] != 1 || got.total() != 2 {
		t.Errorf("tools/list with a stale expiry: %s, want 1 GetItem + 1 UpdateItem", got)
	}
	t.Logf("legacy tools/list: %s right after a write; %s once a tenth of the idle timeout has passed", "1 GetItem", got)
}

// TestCallsEviction counts an initialize that evicts the least recently
// used session of a full pool.
func TestCallsEviction(t *testing.T) {
	t.Parallel()
	db, table := dynalite.Table(t, "dynamocount-")
	cnt := &counting{inner: db, n: calls{}}
	hs := httptest.NewServer(newServer(t, cnt, table, func(o *core.ServerOptions) { o.MaxAnonymousSessions = 2 }))
	defer hs.Close()
	var first string
	for i := range 3 {
		cl := &mcptest.Client{URL: hs.URL}
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		res := ok(t, "initialize")(cl.Post(t.Context(), body, nil, nil))
		got := cnt.take()
		want := calls{"PutItem": 1, "Query": 1}
		if i == 0 {
			first = res.Header.Get("Mcp-Session-Id")
		}
		if i == 2 {
			want["DeleteItem"] = 1
			t.Logf("initialize in a full pool (evicts 1): %s", got)
		}
		for _, op := range []string{"PutItem", "Query", "DeleteItem"} {
			if got[op] != want[op] {
				t.Errorf("initialize %d: %s, want %s", i+1, got, want)
				break
			}
		}
		if got["GetItem"]+got["UpdateItem"] != 0 {
			t.Errorf("initialize %d: %s", i+1, got)
		}
		time.Sleep(5 * time.Millisecond) // distinct LastUsed
	}
	cl := &mcptest.Client{URL: hs.URL, SessionID: first, Version: "2025-11-25"}
	if res, err := cl.LegacyCall(t.Context(), "ping", nil, nil); err != nil || res.Status != http.StatusNotFound {
		t.Errorf("the least recently used session still answers after the eviction: %v %+v", err, res)
	}
}

// TestCallsBridgeAcrossInstances counts a legacy call that asks for input
// on instance A while the client's answer reaches instance B: B stores the
// answer in the session, and A, polling the store, finds it.
func TestCallsBridgeAcrossInstances(t *testing.T) {
	t.Parallel()
	db, table := dynalite.Table(t, "dynamocount-")
	cntA, cntB := &counting{inner: db, n: calls{}}, &counting{inner: db, n: calls{}}
	a := httptest.NewServer(newServer(t, cntA, table, nil))
	defer a.Close()
	b := httptest.NewServer(newServer(t, cntB, table, nil))
	defer b.Close()
	p := proxy.New(nil)
	for name, u := range map[string]string{"A": a.URL, "B": b.URL} {
		if err := p.Add(t.Context(), name, u); err != nil {
			t.Fatal(err)
		}
	}
	front := httptest.NewServer(p)
	defer front.Close()

	cl := &mcptest.Client{URL: front.URL}
	if _, err := cl.Initialize(t.Context(), "2025-11-25", map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cntA.take()
	cntB.take()
	start := time.Now()
	res := ok(t, "bridged call")(cl.LegacyCall(t.Context(), "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}, accept))
	wait := time.Since(start)
	if !strings.Contains(string(res.Result), "confirmed step-1") {
		t.Fatalf("bridged call: %s", res.Result)
	}
	recs := p.Records()
	var callOn, answerOn string
	for _, r := range recs {
		switch {
		case r.Kind == "request" && r.RPCMethod == "tools/call":
			callOn = r.Replica
		case r.Kind == "response":
			answerOn = r.Replica
		}
	}
	if callOn == "" || answerOn == "" || callOn == answerOn {
		t.Fatalf("the call went to %q and the answer to %q: want two instances", callOn, answerOn)
	}
	waiting, answering := cntA.take(), cntB.take()
	if callOn == "B" {
		waiting, answering = answering, waiting
	}
	// The answering instance: 1 read (the session), 1 write (the answer).
	if answering["GetItem"] != 1 || answering["UpdateItem"] != 1 || answering.total() != 2 {
		t.Errorf("instance receiving the answer: %s, want 1 GetItem + 1 UpdateItem", answering)
	}
	// The waiting instance: its read, one read per 250 ms poll, and the
	// write that removes the delivered answer (re-read and retried once if
	// the answer's write made it stale).
	if polls := int(wait/(250*time.Millisecond)) + 1; waiting["GetItem"] > 2+polls || waiting["UpdateItem"] < 1 || waiting["UpdateItem"] > 2 ||
		waiting["PutItem"]+waiting["DeleteItem"]+waiting["Query"] != 0 {
		t.Errorf("waiting instance: %s over %v", waiting, wait)
	}
	t.Logf("legacy bridged call across instances (%v): waiting instance %s; answering instance %s",
		wait.Round(time.Millisecond), waiting, answering)
}

// Benchmarks: a legacy tools/call in a session, served in process
// (ServeHTTP, no network to the server), on the in-memory store and on
// store/dynamo against dynalite (a local network round trip per call).

var (
	benchMu     sync.Mutex
	benchMemory = map[string]float64{} // ns/op of the memory runs, by case
)

// legacySession initializes a session on h and returns its id.
func legacySession(b *testing.B, h http.Handler) string {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || id == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	return id
}

func benchCall(b *testing.B, h http.Handler, session, body, want string) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			b.Fatalf("HTTP %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkLegacyToolsCall compares the stores. The dynalite runs report
// x-memory, their ns/op divided by the memory run's of the same case.
func BenchmarkLegacyToolsCall(b *testing.B) {
	cases := []struct{ name, body, want string }{
		{"plain", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, `"hi"`},
		{"session-write", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"counter","arguments":{"add":1}}}`, `"result"`},
	}
	for _, store := range []string{"memory", "dynalite"} {
		for _, c := range cases {
			b.Run(store+"/"+c.name, func(b *testing.B) {
				var srv *core.Server
				if store == "memory" {
					srv = addTools(core.NewServer(core.Implementation{Name: "bench", Version: "1"}, &core.ServerOptions{Keys: stateKey}))
				} else {
					db, table := dynalite.Table(b, "dynamocount-")
					srv = newServer(b, db, table, nil)
				}
				session := legacySession(b, srv)
				start := time.Now()
				benchCall(b, srv, session, c.body, c.want)
				nsop := float64(time.Since(start).Nanoseconds()) / float64(b.N)
				benchMu.Lock()
				defer benchMu.Unlock()
				if store == "memory" {
					benchMemory[c.name] = nsop
				} else if m := benchMemory[c.name]; m > 0 {
					b.ReportMetric(nsop/m, "x-memory")
				}
			})
		}
	}
}
