package core_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// round is what a middleware saw of one round.
type round struct {
	method, target, version, session, principal string
	modern                                      bool
	round                                       int
	status                                      string
	code                                        int
	result                                      string
	meta, traceparentHeader                     string
	traceparentMeta, host                       string
	id                                          string
}

// observer is a middleware that records every round it sees.
type observer struct {
	mu     sync.Mutex
	rounds []round
}

func (o *observer) middleware(next core.Handler) core.Handler {
	return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
		out, err := next(ctx, c)
		r := round{method: c.Method, target: c.Target, version: c.ProtocolVersion, modern: c.Modern(),
			round: c.Round, status: out.Status(err), code: core.CodeOf(err), meta: string(c.Meta), id: string(c.ID)}
		if c.Session != nil {
			r.session = c.Session.ID()
		}
		if c.Principal != nil {
			r.principal = c.Principal.Subject
		}
		if c.Header != nil {
			r.traceparentHeader = c.Header.Get("Traceparent")
		}
		r.traceparentMeta, _ = c.MetaString("traceparent")
		if hr := c.HTTPRequest(); hr != nil {
			r.host = hr.Host
		}
		if out != nil {
			r.result = string(out.Result)
		}
		o.mu.Lock()
		o.rounds = append(o.rounds, r)
		o.mu.Unlock()
		return out, err
	}
}

func (o *observer) take() []round {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.rounds
	o.rounds = nil
	return r
}

func (o *observer) last(t *testing.T) round {
	t.Helper()
	r := o.take()
	if len(r) != 1 {
		t.Fatalf("%d rounds seen, want 1: %+v", len(r), r)
	}
	return r[0]
}

// TestMiddlewareOrder checks that the first middleware listed is the
// outermost: it runs first and sees the outcome last.
func TestMiddlewareOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []string
	mark := func(name string) core.Middleware {
		return func(next core.Handler) core.Handler {
			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
				mu.Lock()
				events = append(events, name+" in")
				mu.Unlock()
				out, err := next(ctx, c)
				mu.Lock()
				events = append(events, name+" out")
				mu.Unlock()
				return out, err
			}
		}
	}
	srv := newFixture(t, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{mark("a"), mark("b"), mark("c")}})
	core.AddTool(srv, &core.Tool{Name: "mark"}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
		mu.Lock()
		events = append(events, "handler")
		mu.Unlock()
		return "ok", nil
	})
	callReq(1, "mark", nil).do(t, srv).result(t)
	want := "a in,b in,c in,handler,c out,b out,a out"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

var discard = slog.New(slog.DiscardHandler)

// TestMiddlewareShortCircuit checks that a middleware refusing a request
// answers it with its *Error in both eras, and with a logged -32603 for any
// other error, without running the handler.
func TestMiddlewareShortCircuit(t *testing.T) {
	t.Parallel()
	var refuse error
	var mu sync.Mutex
	ran := 0
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	srv := newFixture(t, &core.ServerOptions{Logger: logger, DisableRequestLog: true, Middleware: []core.Middleware{
		func(next core.Handler) core.Handler {
			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
				mu.Lock()
				err := refuse
				mu.Unlock()
				if err != nil && c.Method == "tools/call" {
					return nil, err
				}
				return next(ctx, c)
			}
		}}})
	core.AddTool(srv, &core.Tool{Name: "count"}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
		mu.Lock()
		ran++
		mu.Unlock()
		return "ok", nil
	})
	sid := initialize(t, srv, legacyVersion, nil, nil)
	set := func(err error) { mu.Lock(); refuse = err; mu.Unlock() }

	set(&core.Error{Code: -32042, Message: "quota exceeded"})
	e := callReq(1, "count", nil).do(t, srv).wantError(t, http.StatusOK, -32042)
	if e["message"] != "quota exceeded" {
		t.Errorf("modern error %v", e)
	}
	e = lreq(2, "tools/call", map[string]any{"name": "count"}, legacyVersion, sid).do(t, srv).wantError(t, http.StatusOK, -32042)
	if e["message"] != "quota exceeded" {
		t.Errorf("legacy error %v", e)
	}
	set(core.InvalidParamsError("no such widget"))
	callReq(3, "count", nil).do(t, srv).wantError(t, http.StatusOK, core.CodeInvalidParams)

	set(errors.New("secret backend detail"))
	for _, r := range []*testReq{callReq(4, "count", nil), lreq(5, "tools/call", map[string]any{"name": "count"}, legacyVersion, sid)} {
		res := r.do(t, srv)
		e := res.wantError(t, http.StatusOK, core.CodeInternalError)
		if strings.Contains(string(res.Body), "secret backend detail") {
			t.Errorf("plain error text sent: %s", res.Body)
		}
		if e["message"] != "Internal error" {
			t.Errorf("message %v", e["message"])
		}
	}
	logMu.Lock()
	if !strings.Contains(logs.String(), "secret backend detail") {
		t.Errorf("plain error not logged: %s", logs.String())
	}
	logMu.Unlock()
	if ran != 0 {
		t.Errorf("the handler ran %d times behind a refusing middleware", ran)
	}
	set(nil)
	callReq(6, "count", nil).do(t, srv).result(t)
	if ran != 1 {
		t.Errorf("the handler ran %d times, want 1", ran)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestMiddlewareEmptyOutcome checks that a middleware returning neither a
// result nor an error gets a -32603, not a response that never ends.
func TestMiddlewareEmptyOutcome(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{
		func(core.Handler) core.Handler {
			return func(context.Context, *core.Call) (*core.Outcome, error) { return &core.Outcome{}, nil }
		}}})
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, srv).wantError(t, http.StatusOK, core.CodeInternalError)
}

// TestMiddlewarePanic checks that a middleware's panic is a logged -32603
// and the server keeps serving.
func TestMiddlewarePanic(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	srv := newFixture(t, &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil)), Middleware: []core.Middleware{
		func(next core.Handler) core.Handler {
			return func(ctx context.Context, c *core.Call) (*core.Outcome, error) {
				if c.Target == "panic_in_middleware" {
					panic("middleware secret 0xfeed")
				}
				return next(ctx, c)
			}
		}}})
	res := callReq(1, "panic_in_middleware", nil).do(t, srv)
	res.wantError(t, http.StatusOK, core.CodeInternalError)
	if strings.Contains(string(res.Body), "0xfeed") {
		t.Errorf("panic text sent: %s", res.Body)
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "middleware panicked") {
		t.Errorf("panic not logged: %s", logged)
	}
	assertServes(t, srv)
}

// TestMiddlewareOutcome checks what a middleware sees of each kind of
// outcome, in both eras.
func TestMiddlewareOutcome(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	srv := newFixture(t, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{obs.middleware}})
	sid := initialize(t, srv, legacyVersion, nil, nil)
	obs.take() // initialize is the handshake: the era answers it; notifications/initialized is no request

	cases := []struct {
		name           string
		tool           string
		args           any
		status         string
		code           int
		resultContains string
	}{
		{"success", "add", map[string]any{"a": 40, "b": 2}, "ok", 0, `"text":"42"`},
		{"JSON-RPC error", "invalid_params", nil, "error", core.CodeInvalidParams, ""},
		{"server error", "server_error", nil, "error", core.CodeInternalError, ""},
		{"isError", "tool_error", nil, "isError", 0, `"isError":true`},
		{"panic", "panic", nil, "error", core.CodeInternalError, ""},
		{"plain error", "plain_error", nil, "error", core.CodeInternalError, ""},
	}
	for _, c := range cases {
		for _, modern := range []bool{true, false} {
			r := callReq(7, c.tool, c.args).withHeader("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").
				withMeta("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			if !modern {
				p := map[string]any{"name": c.tool}
				if c.args != nil {
					p["arguments"] = c.args
				}
				r = lreq(7, "tools/call", p, legacyVersion, sid).withHeader("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			}
			r.do(t, srv)
			got := obs.last(t)
			if got.status != c.status || got.code != c.code || !strings.Contains(got.result, c.resultContains) ||
				(c.code != 0) != (got.result == "") {
				t.Errorf("%s (modern %v): status %s code %d result %s", c.name, modern, got.status, got.code, got.result)
			}
			if got.method != "tools/call" || got.target != c.tool || got.modern != modern || got.id != "7" || got.round != 0 ||
				got.traceparentHeader != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
				t.Errorf("%s (modern %v): %+v", c.name, modern, got)
			}
			if got.host == "" {
				t.Errorf("%s (modern %v): no HTTP request", c.name, modern)
			}
			if modern && (got.version != modernVersion || got.session != "" || !strings.Contains(got.meta, core.MetaProtocolVersion) ||
				got.traceparentMeta != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") {
				t.Errorf("modern call: %+v", got)
			}
			if !modern && (got.version != legacyVersion || got.session != sid || got.meta != "" || got.traceparentMeta != "") {
				t.Errorf("legacy call: %+v", got)
			}
		}
	}

	t.Run("targets", func(t *testing.T) {
		for _, c := range []struct {
			r      *testReq
			target string
		}{
			{mreq(1, "resources/read", map[string]any{"uri": "test://static"}), "test://static"},
			{mreq(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}), "greet"},
			{mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"},
				"argument": map[string]any{"name": "who", "value": "a"}}), "greet"},
			{mreq(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://items/{id}"},
				"argument": map[string]any{"name": "id", "value": "a"}}), "test://items/{id}"},
			{mreq(1, "tools/list", nil), ""},
		} {
			c.r.do(t, srv).result(t)
			if got := obs.last(t); got.target != c.target || got.status != "ok" || got.method != c.r.method {
				t.Errorf("%s: %+v, want target %q", c.r.method, got, c.target)
			}
		}
	})
	t.Run("unknown method", func(t *testing.T) {
		// A 2026-07-28 request for an unknown method is answered by the era
		// before it is built (it names no method of the table); a legacy
		// one reaches the chain.
		mreq(1, "tools/unknown", nil).do(t, srv).wantError(t, http.StatusNotFound, core.CodeMethodNotFound)
		if got := obs.take(); len(got) != 0 {
			t.Errorf("modern unknown method reached the chain: %+v", got)
		}
		lreq(1, "tools/unknown", nil, legacyVersion, sid).do(t, srv)
		if got := obs.last(t); got.code != core.CodeMethodNotFound || got.status != "error" || got.method != "tools/unknown" {
			t.Errorf("legacy unknown method: %+v", got)
		}
	})
	t.Run("batch items", func(t *testing.T) {
		old := initialize(t, srv, core.ProtocolVersion20250326, nil, nil)
		obs.take()
		batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},` +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tool_error"}}]`
		res := rawReq(batch, map[string]string{core.HeaderSessionID: old}).do(t, srv)
		if res.Status != http.StatusOK {
			t.Fatalf("batch: HTTP %d %s", res.Status, res.Body)
		}
		got := obs.take()
		if len(got) != 2 || got[0].status != "ok" || got[1].status != "isError" || got[0].version != core.ProtocolVersion20250326 || got[0].session != old {
			t.Errorf("batch rounds %+v", got)
		}
	})
}

// TestMiddlewareRounds checks the rounds a middleware sees of a call that
// asks for input: two requests in 2026-07-28 (input_required, then the
// retry with Round 1), two rounds of one request over the legacy bridge.
func TestMiddlewareRounds(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	srv, _ := newMRTRServer(t, &core.ServerOptions{Logger: discard, StreamKeepAlive: -1, BridgeTimeout: 10 * time.Second,
		Middleware: []core.Middleware{obs.middleware}})

	t.Run("modern", func(t *testing.T) {
		req := func() *testReq {
			return callReq(1, "form_ask", nil).withCaps(map[string]any{"elicitation": map[string]any{}})
		}
		first := round1(t, srv, req())
		r1 := obs.last(t)
		if r1.status != "input_required" || r1.round != 0 || !strings.Contains(r1.result, `"resultType":"input_required"`) || r1.target != "form_ask" {
			t.Errorf("first round %+v", r1)
		}
		retry(req(), 2, first["requestState"], map[string]any{"user_name": accept(map[string]any{"name": "Alice"})}).do(t, srv).result(t)
		r2 := obs.last(t)
		if r2.status != "ok" || r2.round != 1 || !strings.Contains(r2.result, "Hello, Alice!") {
			t.Errorf("retry %+v", r2)
		}
	})

	t.Run("legacy bridge", func(t *testing.T) {
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		sid := initialize(t, srv, legacyVersion, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, nil)
		obs.take()
		s := legacyStream(t, ts.URL, lreq(1, "tools/call", map[string]any{"name": "form_ask", "arguments": map[string]any{}}, legacyVersion, sid))
		raw := s.nextRaw(10 * time.Second)
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(raw, &env)
		answer(t, ts.URL, sid, legacyVersion, env.ID, accept(map[string]any{"name": "Bob"}))
		if got := str(at(decode(t, s.nextRaw(10*time.Second)), "result", "content", 0, "text")); got != "Hello, Bob!" {
			t.Fatalf("result %q", got)
		}
		s.ends(5 * time.Second)
		got := obs.take()
		if len(got) != 2 {
			t.Fatalf("%d rounds, want 2: %+v", len(got), got)
		}
		if got[0].status != "input_required" || got[0].round != 0 || got[0].result != "" || got[0].session != sid {
			t.Errorf("bridge round 0: %+v", got[0])
		}
		if got[1].status != "ok" || got[1].round != 1 || !strings.Contains(got[1].result, "Hello, Bob!") {
			t.Errorf("bridge round 1: %+v", got[1])
		}
	})
}

// record is one request record, decoded from the JSON handler.
type record map[string]any

func records(t *testing.T, b []byte) []record {
	t.Helper()
	var out []record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %s: %v", line, err)
		}
		if r["msg"] == "mcp request" {
			out = append(out, r)
		}
	}
	return out
}

// TestRequestRecord checks the request record: one per round, its
// attributes, and that no token, argument or raw session id appears in the
// log (a hostile request carrying a secret in each).
func TestRequestRecord(t *testing.T) {
	t.Parallel()
	const secretArg, secretToken = "argument-secret-7f3a", "token-secret-91bc"
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := newFixture(t, &core.ServerOptions{Logger: logger, Authenticator: tokenAuth{token: secretToken}})
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return in.S, nil
	})
	bearer := "Bearer " + secretToken
	sid := initializeWith(t, srv, bearer)
	mu.Lock()
	buf.Reset()
	mu.Unlock()

	callReq(1, "echo", map[string]any{"s": secretArg}).withHeader("Authorization", bearer).do(t, srv).result(t)
	lreq(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"s": secretArg}}, legacyVersion, sid).
		withHeader("Authorization", bearer).do(t, srv).result(t)
	callReq(3, "invalid_params", nil).withHeader("Authorization", bearer).do(t, srv)
	callReq(4, "tool_error", nil).withHeader("Authorization", bearer).do(t, srv)

	mu.Lock()
	logged := buf.String()
	mu.Unlock()
	for _, secret := range []string{secretArg, secretToken, sid} {
		if strings.Contains(logged, secret) {
			t.Errorf("the log holds %q:\n%s", secret, logged)
		}
	}
	recs := records(t, []byte(logged))
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4:\n%s", len(recs), logged)
	}
	sum := sha256.Sum256([]byte(sid))
	digest := hex.EncodeToString(sum[:8])
	want := []record{
		{"level": "INFO", "method": "tools/call", "target": "echo", "era": "modern", "version": modernVersion, "status": "ok", "principal": "alice", "client_id": "app-1"},
		{"level": "INFO", "method": "tools/call", "target": "echo", "era": "legacy", "version": legacyVersion, "status": "ok", "session": digest, "principal": "alice"},
		{"level": "INFO", "method": "tools/call", "target": "invalid_params", "era": "modern", "status": "error", "code": float64(core.CodeInvalidParams)},
		{"level": "INFO", "method": "tools/call", "target": "tool_error", "status": "isError"},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v (%v)", i, k, recs[i][k], v, recs[i])
			}
		}
		if _, ok := recs[i]["duration"].(float64); !ok {
			t.Errorf("record %d: no duration: %v", i, recs[i])
		}
		if _, ok := recs[i]["code"]; ok != (w["status"] == "error") {
			t.Errorf("record %d: code present %v: %v", i, ok, recs[i])
		}
	}
	if _, ok := recs[1]["session"]; !ok {
		t.Errorf("legacy record without a session digest: %v", recs[1])
	}
	if _, ok := recs[0]["session"]; ok {
		t.Errorf("modern record with a session: %v", recs[0])
	}
}

// tokenAuth accepts the bearer token token as the subject alice of the
// client app-1.
type tokenAuth struct{ token string }

func (tokenAuth) Metadata(*http.Request) ([]byte, error) { return nil, nil }

func (a tokenAuth) Authenticate(r *http.Request) (context.Context, error) {
	if r.Header.Get("Authorization") != "Bearer "+a.token {
		return nil, errNoCreds
	}
	return core.NewContextWithPrincipal(r.Context(), &core.Principal{Issuer: "https://as.example", ClientID: "app-1", Subject: "alice"}), nil
}

func (tokenAuth) Authorize(context.Context, core.Operation) error { return nil }

// initializeWith runs the legacy handshake with an Authorization header.
func initializeWith(t *testing.T, h http.Handler, authorization string) string {
	t.Helper()
	r := lreq(0, "initialize", map[string]any{"protocolVersion": legacyVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "legacy-client", "version": "1.0"}}, "", "").withHeader("Authorization", authorization)
	res := r.do(t, h)
	res.result(t)
	id := res.Header.Get(core.HeaderSessionID)
	if id == "" {
		t.Fatalf("no session id: %s", res.Body)
	}
	n := lreq(nil, "notifications/initialized", nil, legacyVersion, id).withHeader("Authorization", authorization)
	if nr := n.do(t, h); nr.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %q", nr.Status, nr.Body)
	}
	return id
}

// TestRequestRecordLevel checks RequestLogLevel, that the record follows a
// LevelVar while the server runs, and DisableRequestLog.
func TestRequestRecordLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil)) // info and above
	lv := new(slog.LevelVar)
	lv.Set(slog.LevelDebug)
	srv := newFixture(t, &core.ServerOptions{Logger: logger, RequestLogLevel: lv})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(records(t, buf.Bytes()))
	}
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, srv).result(t)
	if n := count(); n != 0 {
		t.Errorf("%d records at debug into an info logger", n)
	}
	lv.Set(slog.LevelWarn)
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, srv).result(t)
	if n := count(); n != 1 {
		t.Errorf("%d records after raising the level, want 1", n)
	}
	mu.Lock()
	if !strings.Contains(buf.String(), `"level":"WARN"`) {
		t.Errorf("record not at the configured level: %s", buf.String())
	}
	mu.Unlock()

	var off bytes.Buffer
	quiet := newFixture(t, &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(&off, nil)), DisableRequestLog: true})
	callReq(1, "add", map[string]any{"a": 1, "b": 2}).do(t, quiet).result(t)
	if off.Len() != 0 {
		t.Errorf("DisableRequestLog logged %s", off.Bytes())
	}
}

// TestRequestRecordDuration checks the record's duration with the fake
// clock of a synctest bubble: a tool that sleeps 3s is logged as 3s.
func TestRequestRecordDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		srv := core.NewServer(testImpl, &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
		core.AddTool(srv, &core.Tool{Name: "slow"}, func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			time.Sleep(3 * time.Second)
			return "done", nil
		})
		callReq(1, "slow", nil).do(t, srv).result(t)
		recs := records(t, buf.Bytes())
		if len(recs) != 1 || recs[0]["duration"] != float64(3*time.Second) {
			t.Errorf("records %v, want one of duration 3s", recs)
		}
		srv.Close()
	})
}

// TestMiddlewarePolling checks the rounds of a legacy call on a buffered
// platform (SSE polling): the first request's round ends input_required
// with the questions sent and the response parked; the client's resumption
// is a request of its own whose round is Round 1.
func TestMiddlewarePolling(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	srv := core.NewServer(testImpl, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{obs.middleware}})
	core.AddTool(srv, &core.Tool{Name: "ask_once"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		if r, ok := req.Input.Elicitation("q"); ok {
			return "answered " + r.Action, nil
		}
		return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("Go on?",
			json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
	})
	ts := httptest.NewServer(bufferedHandler(srv))
	t.Cleanup(ts.Close)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(t.Context(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	obs.take()
	send := func(method string, body []byte, lastEventID string) []sseEvent {
		t.Helper()
		return sessionEvents(t.Context(), t, c, method, body, lastEventID)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "ask_once", "arguments": map[string]any{}}})
	events := send(http.MethodPost, call, "")
	if len(events) != 1 || events[0].id == "" {
		t.Fatalf("first request: %v, want one elicitation with an event id", events)
	}
	if got := obs.last(t); got.status != "input_required" || got.round != 0 || got.target != "ask_once" || got.session != c.SessionID {
		t.Errorf("first round %+v", got)
	}
	var asked struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal([]byte(events[0].data), &asked)
	ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": asked.ID, "result": map[string]any{"action": "decline"}})
	if r, err := c.Post(t.Context(), ans, http.Header{"Mcp-Protocol-Version": {c.Version}}, nil); err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("posting the answer: %v %v", err, r)
	}
	events = send(http.MethodGet, nil, events[0].id)
	if len(events) != 1 || !strings.Contains(events[0].data, "answered decline") {
		t.Fatalf("resumed: %v", events)
	}
	if got := obs.last(t); got.status != "ok" || got.round != 1 || got.target != "ask_once" || got.method != "tools/call" {
		t.Errorf("resumed round %+v", got)
	}
}

// TestMiddlewareCancelled checks the outcome of a legacy call the client
// cancels (notifications/cancelled): Cancelled, and no response.
func TestMiddlewareCancelled(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	started := make(chan struct{})
	srv := core.NewServer(testImpl, &core.ServerOptions{Logger: discard, Middleware: []core.Middleware{obs.middleware}})
	core.AddTool(srv, &core.Tool{Name: "slow"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(t.Context(), core.ProtocolVersion20251125, nil); err != nil {
		t.Fatal(err)
	}
	obs.take()
	res := cancelSlowCall(t, t.Context(), c, started)
	select {
	case r := <-res:
		if r == nil || r.Result != nil || r.Error != nil {
			t.Fatalf("a cancelled request got a response: %v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	if got := obs.last(t); got.status != "cancelled" || got.target != "slow" {
		t.Errorf("cancelled call %+v", got)
	}
}

// TestMiddlewareReplacesResult: a middleware's own result is what the
// client gets in both eras, whether it is a new buffer, the handler's
// result rewritten in place and cut short, a prefix of it or the handler's
// result grown by append.
func TestMiddlewareReplacesResult(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		replace func(res []byte) []byte
	}{
		{"new", func([]byte) []byte { return []byte(`{"content":[],"isError":true}`) }},
		{"in place", func(res []byte) []byte { return res[:copy(res, `{"content":[]}`)] }},
		{"prefix", func(res []byte) []byte { return res[:len(res)/2] }},
		{"grown", func(res []byte) []byte { return append(res[:len(res)-1], `,"_meta":{"x":1}}`...) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var want []byte
			srv := newFixture(t, &core.ServerOptions{Logger: slog.New(slog.DiscardHandler), DisableRequestLog: true, Middleware: []core.Middleware{
				func(next core.Handler) core.Handler {
					return func(ctx context.Context, call *core.Call) (*core.Outcome, error) {
						out, err := next(ctx, call)
						if err == nil && call.Method == "tools/call" {
							mu.Lock()
							want = c.replace(bytes.Clone(out.Result))
							mu.Unlock()
							out = &core.Outcome{Result: c.replace(out.Result)}
						}
						return out, err
					}
				}}})
			sid := initialize(t, srv, legacyVersion, nil, nil)
			args := map[string]any{"a": 40, "b": 2}
			for i, r := range []*testReq{callReq(1, "add", args), lreq(1, "tools/call", map[string]any{"name": "add", "arguments": args}, legacyVersion, sid)} {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, r.httpRequest("/mcp"))
				mu.Lock()
				w := `{"jsonrpc":"2.0","id":1,"result":` + string(want) + `}`
				mu.Unlock()
				if got := rec.Body.String(); got != w || len(want) == 0 {
					t.Errorf("request %d\n got %s\nwant %s", i, got, w)
				}
			}
		})
	}
}
