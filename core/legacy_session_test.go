package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
	"github.com/mcpfn/mcpfn/store/storetest"
)

// principalFromHeader stands in for authentication middleware: it puts the
// principal named by X-Test-Principal ("issuer|client|subject") on the
// request context.
func principalFromHeader(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Test-Principal"); v != "" {
			p := strings.Split(v, "|")
			r = r.WithContext(core.NewContextWithPrincipal(r.Context(), &core.Principal{Issuer: p[0], ClientID: p[1], Subject: p[2]}))
		}
		h.ServeHTTP(w, r)
	})
}

// sessionEnv is a server with a store/memory session store, served in this
// process (handlerClient), so that a test can run in a synctest bubble and
// let idle time pass with time.Sleep.
type sessionEnv struct {
	srv   *core.Server
	http  *http.Client
	store *memory.Store
}

func newSessionEnv(t *testing.T, configure func(*core.ServerOptions)) *sessionEnv {
	t.Helper()
	store := &memory.Store{}
	opts := &core.ServerOptions{SessionStore: store}
	if configure != nil {
		configure(opts)
	}
	srv := core.NewServer(core.Implementation{Name: "sessions", Version: "1"}, opts)
	core.AddTool(srv, &core.Tool{Name: "hello", Description: "Says hello."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "hello", nil })
	return &sessionEnv{srv: srv, http: handlerClient(principalFromHeader(srv)), store: store}
}

func (e *sessionEnv) client(principal string) *mcptest.Client {
	c := &mcptest.Client{URL: "http://mcp.test/mcp", HTTP: e.http}
	if principal != "" {
		c.Header = http.Header{"X-Test-Principal": {principal}}
	}
	return c
}

func sessInit(t *testing.T, c *mcptest.Client) string {
	t.Helper()
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if c.SessionID == "" {
		t.Fatal("initialize issued no session id")
	}
	return c.SessionID
}

// sessStatus sends tools/list in session id (which may not be c's own) and
// returns the HTTP status.
func sessStatus(t *testing.T, c *mcptest.Client, id string) int {
	t.Helper()
	saved := c.SessionID
	c.SessionID = id
	defer func() { c.SessionID = saved }()
	r, err := c.LegacyCall(context.Background(), "tools/list", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status == http.StatusOK && r.Error != nil {
		t.Fatalf("tools/list in session: %v", r.Error)
	}
	return r.Status
}

func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newSessionEnv(t, func(o *core.ServerOptions) { o.SessionIdleTimeout = 30 * time.Minute })
		c := e.client("")
		id := sessInit(t, c)
		time.Sleep(10 * time.Minute) // a request renews the idle timeout
		if got := sessStatus(t, c, id); got != http.StatusOK {
			t.Fatalf("after 10 min: HTTP %d", got)
		}
		time.Sleep(29 * time.Minute) // 39 min after creation, 29 after last use
		if got := sessStatus(t, c, id); got != http.StatusOK {
			t.Fatalf("29 min after the last use: HTTP %d, want 200 (the timeout counts from the last use)", got)
		}
		time.Sleep(31 * time.Minute)
		if got := sessStatus(t, c, id); got != http.StatusNotFound {
			t.Fatalf("31 min idle: HTTP %d, want 404", got)
		}
		// The client re-initializes and carries on.
		id2 := sessInit(t, c)
		if id2 == id {
			t.Fatal("re-initialize reused the expired id")
		}
		if got := sessStatus(t, c, id2); got != http.StatusOK {
			t.Fatalf("new session: HTTP %d", got)
		}
	})
}

func TestSessionEvictionPerPrincipal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newSessionEnv(t, func(o *core.ServerOptions) { o.MaxSessionsPerPrincipal = 2 })
		alice := e.client("iss|app|alice")
		s1 := sessInit(t, alice)
		time.Sleep(time.Minute)
		s2 := sessInit(t, alice)
		time.Sleep(5 * time.Minute)
		if got := sessStatus(t, alice, s1); got != http.StatusOK { // s1 is now the most recently used
			t.Fatalf("s1: HTTP %d", got)
		}
		bob := e.client("iss|app|bob")
		b1 := sessInit(t, bob) // another principal's pool
		time.Sleep(time.Minute)
		s3 := sessInit(t, alice)
		if got := sessStatus(t, alice, s2); got != http.StatusNotFound {
			t.Fatalf("s2 (least recently used) after the limit: HTTP %d, want 404", got)
		}
		for _, id := range []string{s1, s3} {
			if got := sessStatus(t, alice, id); got != http.StatusOK {
				t.Fatalf("alice's session %s: HTTP %d, want 200", id, got)
			}
		}
		if got := sessStatus(t, bob, b1); got != http.StatusOK {
			t.Fatalf("bob's session was evicted by alice's limit: HTTP %d", got)
		}
	})
}

func TestSessionEvictionAnonymousPool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := newSessionEnv(t, func(o *core.ServerOptions) { o.MaxAnonymousSessions = 3; o.MaxSessionsPerPrincipal = 1 })
		var ids []string
		for i := 0; i < 5; i++ {
			ids = append(ids, sessInit(t, e.client("")))
			time.Sleep(time.Second)
		}
		carol := e.client("iss|app|carol")
		cs := sessInit(t, carol)
		c := e.client("")
		for i, id := range ids {
			want := http.StatusOK
			if i < 2 {
				want = http.StatusNotFound
			}
			if got := sessStatus(t, c, id); got != want {
				t.Errorf("anonymous session %d: HTTP %d, want %d", i, got, want)
			}
		}
		if got := sessStatus(t, carol, cs); got != http.StatusOK {
			t.Fatalf("an authenticated session counted in the anonymous pool: HTTP %d", got)
		}
		if n := e.store.Len(); n != 4 {
			t.Fatalf("%d live sessions, want 4", n)
		}
	})
}

func TestSessionPrincipalBinding(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, nil)
	owner := e.client("https://idp|app-1|alice")
	id := sessInit(t, owner)
	for _, other := range []string{
		"https://idp|app-1|mallory", // another user
		"https://idp|app-2|alice",   // the same user through another client
		"https://other|app-1|alice", // another issuer
		"",                          // anonymous
	} {
		if got := sessStatus(t, e.client(other), id); got != http.StatusNotFound {
			t.Errorf("principal %q using alice's session: HTTP %d, want 404", other, got)
		}
	}
	if got := sessStatus(t, owner, id); got != http.StatusOK {
		t.Fatalf("the owner: HTTP %d", got)
	}
	anon := e.client("")
	aid := sessInit(t, anon)
	if got := sessStatus(t, owner, aid); got != http.StatusNotFound {
		t.Fatalf("an authenticated caller using an anonymous session: HTTP %d, want 404", got)
	}
}

func TestSessionDeleteThenReinitialize(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, nil)
	c := e.client("")
	id := sessInit(t, c)
	del := func(id string) int {
		req, _ := http.NewRequest(http.MethodDelete, "http://mcp.test/mcp", nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := del(id); got != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d, want 204", got)
	}
	if got := sessStatus(t, c, id); got != http.StatusNotFound {
		t.Fatalf("request after DELETE: HTTP %d, want 404", got)
	}
	if got := del(id); got != http.StatusNotFound {
		t.Fatalf("second DELETE: HTTP %d, want 404", got)
	}
	id2 := sessInit(t, c)
	if got := sessStatus(t, c, id2); got != http.StatusOK {
		t.Fatalf("after re-initialize: HTTP %d", got)
	}
}

func TestSessionIDsAreUnguessableVisibleASCII(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, nil)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		id := sessInit(t, e.client(""))
		if len(id) < 32 {
			t.Fatalf("session id %q is short", id)
		}
		for _, c := range []byte(id) {
			if c < 0x21 || c > 0x7e {
				t.Fatalf("session id %q holds byte %#x", id, c)
			}
		}
		if seen[id] {
			t.Fatalf("session id %q issued twice", id)
		}
		seen[id] = true
	}
}

type counterArgs struct {
	Add int `json:"add"`
}

func TestSessionToolValues(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, nil)
	core.AddSessionTool(e.srv, &core.Tool{Name: "counter", Description: "Counts per session."},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in counterArgs) (int, error) {
			return core.UpdateSessionValue(ctx, sess, "n", func(n int) (int, error) { return n + in.Add, nil })
		})
	call := func(c *mcptest.Client, add int) string {
		r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "counter", "arguments": map[string]any{"add": add}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if err := r.Decode(&res); err != nil {
			return "error: " + err.Error()
		}
		return res.Content[0].Text
	}
	a, b := e.client(""), e.client("")
	sessInit(t, a)
	sessInit(t, b)
	call(a, 2)
	if got := call(a, 3); got != "5" {
		t.Fatalf("session a: %s, want 5", got)
	}
	if got := call(b, 1); got != "1" {
		t.Fatalf("session b sees a's value: %s, want 1", got)
	}
	// The stored value is JSON in the store.
	rec, err := e.store.Get(context.Background(), a.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec.Data), `"n":5`) {
		t.Fatalf("stored session data %s lacks the value", rec.Data)
	}
	// A session tool is neither listed for nor callable by modern clients.
	m := &mcptest.Client{URL: "http://mcp.test/mcp", HTTP: e.http}
	lr, err := m.Call(context.Background(), "tools/list", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(lr.Result), `"counter"`) {
		t.Fatalf("modern tools/list lists the session tool: %s", lr.Result)
	}
	cr, err := m.Call(context.Background(), "tools/call", map[string]any{"name": "counter", "arguments": map[string]any{"add": 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Error == nil || cr.Error.Code != core.CodeInvalidParams {
		t.Fatalf("modern call of a session tool: %s, want -32602", cr.Messages)
	}
	// A sessionless legacy call gets a clear error.
	sl := &mcptest.Client{URL: "http://mcp.test/mcp", HTTP: e.http, Version: core.ProtocolVersion20251125}
	if got := call(sl, 1); !strings.Contains(got, "needs a session") {
		t.Fatalf("sessionless legacy call: %q", got)
	}
}

// Concurrent read-modify-write updates of one session value lose nothing.
func TestSessionConcurrentUpdates(t *testing.T) {
	t.Parallel()
	e := newSessionEnv(t, nil)
	core.AddSessionTool(e.srv, &core.Tool{Name: "inc", Description: "Increments."},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in struct{}) (int, error) {
			return core.UpdateSessionValue(ctx, sess, "n", func(n int) (int, error) { return n + 1, nil })
		})
	c := e.client("")
	sessInit(t, c)
	const workers, each = 6, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := &mcptest.Client{URL: c.URL, HTTP: e.http, SessionID: c.SessionID, Version: c.Version}
			for i := 0; i < each; i++ {
				r, err := cc.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "inc", "arguments": map[string]any{}}, nil)
				if err != nil {
					t.Errorf("call: %v", err)
					return
				}
				if r.Error != nil {
					t.Errorf("call: %v", r.Error)
					return
				}
			}
		}()
	}
	wg.Wait()
	sess, err := e.store.Get(context.Background(), c.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"n":%d`, workers*each); !strings.Contains(string(sess.Data), want) {
		t.Fatalf("session data %s, want %s: updates were lost", sess.Data, want)
	}
}

func TestSessionToolRegistrationInModernMode(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "m", Version: "1"}, &core.ServerOptions{Mode: core.ModeModern})
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), `"stateful"`) || !strings.Contains(fmt.Sprint(r), "session") {
			t.Fatalf("panic = %v, want a registration error naming the tool", r)
		}
	}()
	core.AddSessionTool(srv, &core.Tool{Name: "stateful", Description: "x"},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in struct{}) (string, error) {
			return "", nil
		})
}

func TestSessionOptionalServesModern(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "m", Version: "1"}, &core.ServerOptions{Mode: core.ModeModern})
	core.AddSessionTool(srv, &core.Tool{Name: "maybe", Description: "x"},
		func(ctx context.Context, req *core.CallToolRequest, sess *core.Session, in struct{}) (string, error) {
			return fmt.Sprintf("session=%v", sess != nil), nil
		}, &core.ToolOptions{SessionOptional: true})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r, err := (&mcptest.Client{URL: ts.URL}).Call(context.Background(), "tools/call", map[string]any{"name": "maybe", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := r.Decode(&res); err != nil || res.Content[0].Text != "session=false" {
		t.Fatalf("modern call: %s", r.Messages)
	}
}

// BenchmarkIdleSessionMemory reports the heap held per idle legacy session
// in the default in-process store (created through initialize).
func BenchmarkIdleSessionMemory(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		srv := core.NewServer(core.Implementation{Name: "mem", Version: "1"}, &core.ServerOptions{MaxAnonymousSessions: -1})
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}`)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for j := 0; j < n; j++ {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code != http.StatusOK || w.Header().Get("Mcp-Session-Id") == "" {
				b.Fatalf("initialize: HTTP %d", w.Code)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heapB/session")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/10k-sessions")
		runtime.KeepAlive(srv)
	}
}

// The store a server uses when ServerOptions.SessionStore is nil passes the
// suite every store must pass.
func TestDefaultSessionStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) core.SessionStore {
		return core.SessionStoreOf(core.NewServer(core.Implementation{Name: "d", Version: "1"}, nil))
	})
}

// failingStore is a memory store whose operations fail on demand, the way a
// throttled or missing DynamoDB table does: all of them while fail is set,
// the writes of existing sessions while failUpdate is.
type failingStore struct {
	memory.Store
	fail       atomic.Bool
	failUpdate atomic.Bool
}

var errThrottled = errors.New("dynamo: get session: ProvisionedThroughputExceededException")

func (f *failingStore) Get(ctx context.Context, id string) (*core.SessionRecord, error) {
	if f.fail.Load() {
		return nil, errThrottled
	}
	return f.Store.Get(ctx, id)
}

func (f *failingStore) Create(ctx context.Context, rec *core.SessionRecord, lim core.SessionLimits) ([]string, error) {
	if f.fail.Load() {
		return nil, errThrottled
	}
	return f.Store.Create(ctx, rec, lim)
}

func (f *failingStore) Update(ctx context.Context, rec *core.SessionRecord) error {
	if f.fail.Load() || f.failUpdate.Load() {
		return errThrottled
	}
	return f.Store.Update(ctx, rec)
}

// A failing session store is a 503 with a logged reason, never a panic,
// never internal text on the wire; the session is intact when the store
// recovers, and 2026-07-28 requests never touch the store.
func TestStoreFailure(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	store := &failingStore{}
	srv := core.NewServer(core.Implementation{Name: "s", Version: "1"}, &core.ServerOptions{
		SessionStore: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	core.AddTool(srv, &core.Tool{Name: "hi", Description: "Says hi."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) { return "hi", nil })
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	store.fail.Store(true)
	r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable || r.Error == nil || r.Error.Code != core.CodeInternalError {
		t.Fatalf("legacy call with the store down: HTTP %d %s, want 503 and -32603", r.Status, r.Messages)
	}
	if strings.Contains(string(r.Messages[0]), "Throughput") {
		t.Fatalf("store detail leaked to the client: %s", r.Messages[0])
	}
	if !strings.Contains(logs.String(), "ProvisionedThroughputExceededException") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("no error log naming the store failure: %s", logs.String())
	}
	// initialize with the store down: 503 too.
	c2 := &mcptest.Client{URL: ts.URL}
	ir, err := c2.Initialize(context.Background(), core.ProtocolVersion20251125, nil)
	if err == nil || ir == nil || ir.Status != http.StatusServiceUnavailable {
		t.Fatalf("initialize with the store down: %v %+v", err, ir)
	}
	// Modern requests do not use the store.
	mr, err := (&mcptest.Client{URL: ts.URL}).Call(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil || mr.Error != nil || !bytes.Contains(mr.Result, []byte(`"hi"`)) {
		t.Fatalf("modern call with the store down: %v %s", err, mr.Messages)
	}
	// The store recovers: the session is still there and serves.
	store.fail.Store(false)
	r, err = c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "hi", "arguments": map[string]any{}}, nil)
	if err != nil || r.Status != http.StatusOK || r.Error != nil {
		t.Fatalf("after recovery: %v %s", err, r.Messages)
	}
}

// TestOnSessionEnd checks ServerOptions.OnSessionEnd: one report per
// session the client deletes, with its start and end, none for a DELETE of
// an unknown or foreign session or for an expired one, and a panicking hook
// does not fail the DELETE.
func TestOnSessionEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ends []core.SessionEnd
		panics := false
		e := newSessionEnv(t, func(o *core.ServerOptions) {
			o.SessionIdleTimeout = 30 * time.Minute
			o.Logger = slog.New(slog.DiscardHandler)
			o.OnSessionEnd = func(ctx context.Context, end core.SessionEnd) {
				mu.Lock()
				ends = append(ends, end)
				p := panics
				mu.Unlock()
				if p {
					panic("hook")
				}
			}
		})
		del := func(id, principal string) int {
			req, _ := http.NewRequest(http.MethodDelete, "http://mcp.test/mcp", nil)
			req.Header.Set("Mcp-Session-Id", id)
			if principal != "" {
				req.Header.Set("X-Test-Principal", principal)
			}
			resp, err := e.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		c := e.client("")
		start := time.Now()
		id := sessInit(t, c)
		time.Sleep(90 * time.Second)
		if got := del(id, "https://as.test|c|mallory"); got != http.StatusNotFound {
			t.Fatalf("DELETE by another principal: HTTP %d, want 404", got)
		}
		if got := del(id, ""); got != http.StatusNoContent {
			t.Fatalf("DELETE: HTTP %d, want 204", got)
		}
		if got := del(id, ""); got != http.StatusNotFound {
			t.Fatalf("second DELETE: HTTP %d, want 404", got)
		}
		expired := sessInit(t, c)
		time.Sleep(31 * time.Minute)
		if got := del(expired, ""); got != http.StatusNotFound {
			t.Fatalf("DELETE of an expired session: HTTP %d, want 404", got)
		}
		mu.Lock()
		got := append([]core.SessionEnd(nil), ends...)
		panics = true
		mu.Unlock()
		want := core.SessionEnd{ID: id, ProtocolVersion: core.ProtocolVersion20251125, Started: start, Ended: start.Add(90 * time.Second), Reason: core.SessionEndDeleted}
		if len(got) != 1 || got[0].ID != want.ID || got[0].ProtocolVersion != want.ProtocolVersion ||
			!got[0].Started.Equal(want.Started) || !got[0].Ended.Equal(want.Ended) || got[0].Reason != want.Reason {
			t.Fatalf("OnSessionEnd reports %+v, want exactly %+v", got, want)
		}
		if d := got[0].Ended.Sub(got[0].Started); d != 90*time.Second {
			t.Fatalf("duration %v, want 90s", d)
		}
		third := sessInit(t, c)
		if got := del(third, ""); got != http.StatusNoContent {
			t.Fatalf("DELETE with a panicking hook: HTTP %d, want 204", got)
		}
		if got := sessStatus(t, c, third); got != http.StatusNotFound {
			t.Fatalf("after a DELETE whose hook panicked: HTTP %d, want 404", got)
		}
	})
}

// A request of a batch (2025-03-26) whose session write fails is answered
// as a POST's is: -32603 in its place in the batch, its neighbours served,
// and the store's failure logged at ERROR with its cause.
func TestBatchStoreFailure(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	store := &failingStore{}
	srv := newFixture(t, &core.ServerOptions{SessionStore: store,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))})
	sid := initialize(t, srv, core.ProtocolVersion20250326, nil, nil)
	store.failUpdate.Store(true)
	r := rawReq(`[{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		map[string]string{core.HeaderProtocolVersion: core.ProtocolVersion20250326, core.HeaderSessionID: sid}).do(t, srv)
	var out []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || len(out) != 2 {
		t.Fatalf("batch answer %d %s: %v", r.Status, r.Body, err)
	}
	if out[0].ID != 1 || out[0].Error == nil || out[0].Error.Code != core.CodeInternalError {
		t.Errorf("setLevel with the store failing: %s, want -32603", r.Body)
	}
	if out[1].ID != 2 || out[1].Result == nil {
		t.Errorf("ping beside it: %s, want a result", r.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "ProvisionedThroughputExceededException") {
		t.Errorf("no ERROR log naming the store's failure:\n%s", logs.String())
	}
}
