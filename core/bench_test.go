package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// benchRequest is an *http.Request whose body can be rewound.
type benchRequest struct {
	req  *http.Request
	body *bytes.Reader
	raw  []byte
}

func newBenchRequest(r *testReq) *benchRequest {
	b := &benchRequest{raw: r.body()}
	b.body = bytes.NewReader(b.raw)
	b.req = r.httpRequest("/mcp")
	b.req.Body = io.NopCloser(b.body)
	return b
}

func (b *benchRequest) rewind() { b.body.Reset(b.raw) }

// serve rewinds the request and serves it with h, writing to w after
// resetting it.
func (b *benchRequest) serve(h http.Handler, w *mcptest.DiscardWriter) {
	b.rewind()
	w.Reset()
	h.ServeHTTP(w, b.req)
}

func benchServe(b *testing.B, h http.Handler, r *testReq, check func(*mcptest.DiscardWriter)) {
	br := newBenchRequest(r)
	w := &mcptest.DiscardWriter{}
	h.ServeHTTP(w, br.req)
	check(w)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br.serve(h, w)
	}
	b.StopTimer()
	check(w)
}

// firstRoundState returns result.requestState of the answer body of a
// first round, failing the benchmark when there is none.
func firstRoundState(b *testing.B, body []byte) string {
	b.Helper()
	var env struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Result.RequestState == "" {
		b.Fatalf("first round: %s", body)
	}
	return env.Result.RequestState
}

func wantStatus(b *testing.B, want int, contains string) func(*mcptest.DiscardWriter) {
	return func(w *mcptest.DiscardWriter) {
		if w.Status != want && !(want == 200 && w.Status == 0) || !bytes.Contains(w.Body.Bytes(), []byte(contains)) {
			b.Fatalf("HTTP %d %s", w.Status, w.Body.Bytes())
		}
	}
}

// quietBench is the options of the benchmarks of the engine: no request
// record (BenchmarkDispatchToolsCall measures it apart), no logs.
func quietBench() *core.ServerOptions {
	return &core.ServerOptions{Logger: slog.New(slog.DiscardHandler), DisableRequestLog: true}
}

// BenchmarkDispatchToolsCall is decode → dispatch → encode of a two-integer
// add in core, without a recorder: with no middleware at all, an empty
// chain, one middleware that only calls the next, and the request record
// (enabled, into a JSON handler that discards, and disabled by the level).
func BenchmarkDispatchToolsCall(b *testing.B) {
	pass := func(next core.Handler) core.Handler {
		return func(ctx context.Context, c *core.Call) (*core.Outcome, error) { return next(ctx, c) }
	}
	for _, c := range []struct {
		name string
		opts *core.ServerOptions
	}{
		{"none", quietBench()},
		{"empty", &core.ServerOptions{Logger: slog.New(slog.DiscardHandler), DisableRequestLog: true, Middleware: []core.Middleware{}}},
		{"pass", &core.ServerOptions{Logger: slog.New(slog.DiscardHandler), DisableRequestLog: true, Middleware: []core.Middleware{pass}}},
		{"record", &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}},
		{"record-disabled", &core.ServerOptions{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), RequestLogLevel: slog.LevelDebug}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := newFixture(b, c.opts)
			benchServe(b, srv, callReq(1, "add", map[string]any{"a": 40, "b": 2}), wantStatus(b, 200, `"text":"42"`))
		})
	}
}

// BenchmarkToolsList lists the fixture's six tools.
func BenchmarkToolsList(b *testing.B) {
	srv := newFixture(b, quietBench())
	benchServe(b, srv, mreq(1, "tools/list", nil), wantStatus(b, 200, `"name":"add"`))
}

// BenchmarkToolsList100 lists a page of 100 tools.
func BenchmarkToolsList100(b *testing.B) {
	srv := core.NewServer(testImpl, nil)
	for i := 0; i < 100; i++ {
		core.AddTool(srv, &core.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "Adds."}, add)
	}
	benchServe(b, srv, mreq(1, "tools/list", nil), wantStatus(b, 200, `"tool_099"`))
}

// BenchmarkToolsList100Filtered lists the same page through a Filter that
// shows every tool: the cost of per-caller discovery (one call per tool,
// one copy of the list).
func BenchmarkToolsList100Filtered(b *testing.B) {
	srv := core.NewServer(testImpl, &core.ServerOptions{
		Filter: func(context.Context, *core.Request, core.Feature) bool { return true },
	})
	for i := 0; i < 100; i++ {
		core.AddTool(srv, &core.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "Adds."}, add)
	}
	benchServe(b, srv, mreq(1, "tools/list", nil), wantStatus(b, 200, `"tool_099"`))
}

// BenchmarkServerDiscover is the cheapest modern request.
func BenchmarkServerDiscover(b *testing.B) {
	srv := newFixture(b, quietBench())
	benchServe(b, srv, mreq(1, "server/discover", nil), wantStatus(b, 200, `"supportedVersions"`))
}

// BenchmarkMRTRTwoRounds is a full two-round multi round-trip tools/call:
// the input_required answer (sealing), then the retry (verification and the
// complete result), through ServeHTTP with a reusable writer.
func BenchmarkMRTRTwoRounds(b *testing.B) {
	srv, _ := newMRTRServer(b, nil)
	caps := map[string]any{"elicitation": map[string]any{}}
	first := callReq(1, "form_ask", nil).withCaps(caps)
	// Prepare a valid retry once: the state stays valid for the benchmark.
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, first.httpRequest("/mcp"))
	second := retry(callReq(2, "form_ask", nil).withCaps(caps), 2, firstRoundState(b, rec.Body.Bytes()),
		map[string]any{"user_name": accept(map[string]any{"name": "Bench"})})
	r1, r2 := newBenchRequest(first), newBenchRequest(second)
	w := &mcptest.DiscardWriter{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r1.serve(srv, w)
		r2.serve(srv, w)
	}
	b.StopTimer()
	if !bytes.Contains(w.Body.Bytes(), []byte("Hello, Bench!")) {
		b.Fatalf("second round: %s", w.Body.Bytes())
	}
}

// BenchmarkLegacyToolsCall is the same add for a sessionless legacy client.
func BenchmarkLegacyToolsCall(b *testing.B) {
	srv := newFixture(b, quietBench())
	r := lreq(1, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 40, "b": 2}}, core.ProtocolVersion20251125, "")
	benchServe(b, srv, r, wantStatus(b, 200, `"text":"42"`))
}

// BenchmarkLegacySessionToolsCall is the same add in a legacy session kept
// by the default in-memory store (one Get per request).
func BenchmarkLegacySessionToolsCall(b *testing.B) {
	srv := newFixture(b, quietBench())
	sid := initialize(b, srv, core.ProtocolVersion20251125, nil, nil)
	r := lreq(1, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 40, "b": 2}}, core.ProtocolVersion20251125, sid)
	benchServe(b, srv, r, wantStatus(b, 200, `"text":"42"`))
}

// TestRequestAllocations holds the benchmarks' tools/call to their
// allocation budgets (testing.AllocsPerRun, so not in parallel): the
// message, its exchange and its Request share one allocation, a legacy
// session's record and the request's in-flight record another, and the
// result is encoded behind its response's head, not copied into it, in a
// recycled buffer.
func TestRequestAllocations(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget float64
		req    func(h http.Handler) *testReq
	}{
		{"2026-07-28", 11, func(http.Handler) *testReq {
			return callReq(1, "add", map[string]any{"a": 40, "b": 2})
		}},
		{"2025-11-25 session", 10, func(h http.Handler) *testReq {
			sid := initialize(t, h, core.ProtocolVersion20251125, nil, nil)
			return lreq(1, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 40, "b": 2}}, core.ProtocolVersion20251125, sid)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFixture(t, quietBench())
			br := newBenchRequest(c.req(srv))
			w := &mcptest.DiscardWriter{}
			n := testing.AllocsPerRun(200, func() { br.serve(srv, w) })
			if !bytes.Contains(w.Body.Bytes(), []byte(`"text":"42"`)) {
				t.Fatalf("HTTP %d %s", w.Status, w.Body.Bytes())
			}
			if n > c.budget+raceAllocSlack {
				t.Errorf("%v allocations per call, budget %v (+%d under the race detector)", n, c.budget, raceAllocSlack)
			}
		})
	}
}
