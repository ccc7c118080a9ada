package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// legacyStream posts a legacy request and returns its open SSE stream.
func legacyStream(t *testing.T, url string, r *testReq) *sseStream {
	t.Helper()
	return openStream(t, url, r)
}

// answer POSTs the client's response to a server-to-client request.
func answer(t *testing.T, url, session, version string, id json.RawMessage, result any) {
	t.Helper()
	body := map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
	if e, ok := result.(map[string]any); ok && e["__error"] != nil {
		body = map[string]any{"jsonrpc": "2.0", "id": id, "error": e["__error"]}
	}
	h := map[string]string{core.HeaderSessionID: session, core.HeaderProtocolVersion: version}
	r := rawReq(string(toJSON(t, body)), h).post(t, http.DefaultClient, url)
	if r.Status != http.StatusAccepted || len(r.Body) != 0 {
		t.Fatalf("posting the answer: HTTP %d %q", r.Status, r.Body)
	}
}

// TestLegacyBridge runs a multi round-trip tool for a legacy session over a
// real HTTP server: the input requests arrive as server-to-client requests
// on the call's SSE stream, the client POSTs its answers, and the call
// completes (2025-11-25 basic/transports).
func TestLegacyBridge(t *testing.T) {
	t.Parallel()
	srv, _ := newMRTRServer(t, &core.ServerOptions{StreamKeepAlive: -1, BridgeTimeout: 10 * time.Second})
	core.AddTool(srv, &core.Tool{Name: "legacy_enum", Description: "Asks with enumNames."},
		func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
			if r, ok := req.Input.Elicitation("pick"); ok {
				return "picked " + str(r.Content["choice"]), nil
			}
			return "", core.InputRequired(core.InputRequests{"pick": core.ElicitForm("Pick one", json.RawMessage(
				`{"type":"object","properties":{"choice":{"type":"string","enum":["a","b"],"enumNames":["Option A","Option B"]}},"required":["choice"]}`))}, "")
		})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}, "sampling": map[string]any{}, "roots": map[string]any{}}
	sid := initialize(t, srv, legacyVersion, caps, nil)

	call := func(t *testing.T, id any, tool string) *sseStream {
		return legacyStream(t, ts.URL, lreq(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, legacyVersion, sid))
	}
	// serverRequest reads the next event: a server-to-client request.
	serverRequest := func(t *testing.T, s *sseStream, method string) (json.RawMessage, map[string]any) {
		t.Helper()
		raw := s.nextRaw(10 * time.Second)
		m := decode(t, raw).(map[string]any)
		if m["method"] != method {
			t.Fatalf("got %v, want a %s request", m, method)
		}
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(raw, &env)
		if len(env.ID) == 0 {
			t.Fatalf("server request without id: %s", raw)
		}
		validateSpec(t, legacyVersion, "ServerRequest", raw)
		return env.ID, m
	}
	final := func(t *testing.T, s *sseStream, id string) map[string]any {
		t.Helper()
		raw := s.nextRaw(10 * time.Second)
		m := decode(t, raw).(map[string]any)
		got, _ := json.Marshal(m["id"])
		if string(got) != id {
			t.Fatalf("final message %s, want the response to %s", raw, id)
		}
		if res, ok := m["result"]; ok {
			validateSpec(t, legacyVersion, "CallToolResult", toJSON(t, res))
			assertNoModernLeak(t, &resp{Msgs: []json.RawMessage{raw}})
		}
		s.ends(5 * time.Second)
		return m
	}

	t.Run("form elicitation", func(t *testing.T) {
		s := call(t, 1, "form_ask")
		id, req := serverRequest(t, s, core.MethodElicit)
		p := req["params"].(map[string]any)
		if str(p["message"]) != "What is your name?" || p["requestedSchema"] == nil {
			t.Errorf("params %v", p)
		}
		answer(t, ts.URL, sid, legacyVersion, id, map[string]any{"action": "accept", "content": map[string]any{"name": "Bob"}})
		if got := textOf(final(t, s, "1")["result"].(map[string]any)); got != "Hello, Bob!" {
			t.Errorf("result text %q", got)
		}
	})
	t.Run("sampling, roots and elicitation at once", func(t *testing.T) {
		s := call(t, "m", "multi")
		got := map[string]json.RawMessage{}
		for i := 0; i < 3; i++ {
			raw := s.nextRaw(10 * time.Second)
			var env struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(raw, &env)
			validateSpec(t, legacyVersion, "ServerRequest", raw)
			got[env.Method] = env.ID
		}
		answer(t, ts.URL, sid, legacyVersion, got[core.MethodCreateMessage], samplingAnswer)
		answer(t, ts.URL, sid, legacyVersion, got[core.MethodListRoots], rootsAnswer)
		answer(t, ts.URL, sid, legacyVersion, got[core.MethodElicit], accept(map[string]any{"name": "Cy"}))
		if got := textOf(final(t, s, `"m"`)["result"].(map[string]any)); got != "Cy/Paris/1" {
			t.Errorf("result text %q", got)
		}
	})
	t.Run("url elicitation gets an elicitationId", func(t *testing.T) {
		s := call(t, 2, "url_ask")
		id, req := serverRequest(t, s, core.MethodElicit)
		if str(at(req, "params", "elicitationId")) == "" || str(at(req, "params", "mode")) != "url" {
			t.Errorf("URL elicitation params %v", req["params"])
		}
		answer(t, ts.URL, sid, legacyVersion, id, map[string]any{"action": "decline"})
		if got := textOf(final(t, s, "2")["result"].(map[string]any)); got != "action decline" {
			t.Errorf("result text %q", got)
		}
	})
	t.Run("enumNames pass through", func(t *testing.T) {
		s := call(t, 3, "legacy_enum")
		id, req := serverRequest(t, s, core.MethodElicit)
		if names := at(req, "params", "requestedSchema", "properties", "choice", "enumNames"); names == nil {
			t.Errorf("enumNames dropped: %v", req["params"])
		}
		answer(t, ts.URL, sid, legacyVersion, id, accept(map[string]any{"choice": "b"}))
		if got := textOf(final(t, s, "3")["result"].(map[string]any)); got != "picked b" {
			t.Errorf("result text %q", got)
		}
	})
	t.Run("client error answer", func(t *testing.T) {
		s := call(t, 4, "sample_ask")
		id, _ := serverRequest(t, s, core.MethodCreateMessage)
		answer(t, ts.URL, sid, legacyVersion, id, map[string]any{"__error": map[string]any{"code": -1, "message": "user rejected sampling"}})
		m := final(t, s, "4")
		if code := num(t, at(m, "error", "code")); code != core.CodeInternalError {
			t.Errorf("error code %d", code)
		}
	})
	t.Run("prompt", func(t *testing.T) {
		s := legacyStream(t, ts.URL, lreq(5, "prompts/get", map[string]any{"name": "ask_prompt"}, legacyVersion, sid))
		id, _ := serverRequest(t, s, core.MethodElicit)
		answer(t, ts.URL, sid, legacyVersion, id, accept(map[string]any{"context": "ctx"}))
		raw := s.nextRaw(10 * time.Second)
		if got := str(at(decode(t, raw), "result", "messages", 0, "content", "text")); got != "Context: ctx" {
			t.Errorf("prompt result %s", raw)
		}
	})
	t.Run("undeclared capability", func(t *testing.T) {
		bare := initialize(t, srv, legacyVersion, map[string]any{"elicitation": map[string]any{}}, nil)
		r := lreq(1, "tools/call", map[string]any{"name": "sample_ask"}, legacyVersion, bare).post(t, http.DefaultClient, ts.URL)
		r.wantError(t, 200, core.CodeInternalError)
		r = lreq(1, "tools/call", map[string]any{"name": "url_ask"}, legacyVersion, bare).post(t, http.DefaultClient, ts.URL)
		r.wantError(t, 200, core.CodeInternalError)
	})
	t.Run("2025-03-26 has no elicitation", func(t *testing.T) {
		old := initialize(t, srv, core.ProtocolVersion20250326, caps, nil)
		r := lreq(1, "tools/call", map[string]any{"name": "form_ask"}, "", old).post(t, http.DefaultClient, ts.URL)
		r.wantError(t, 200, core.CodeInternalError)
	})
	t.Run("JSON-only client cannot be asked", func(t *testing.T) {
		r := lreq(1, "tools/call", map[string]any{"name": "form_ask"}, legacyVersion, sid).withHeader("Accept", "application/json").post(t, http.DefaultClient, ts.URL)
		r.wantError(t, 200, core.CodeInternalError)
	})
}

// TestLegacyGetStream checks the GET stream of a session: list changes
// arrive there.
func TestLegacyGetStream(t *testing.T) {
	t.Parallel()
	srv := newFixture(t, &core.ServerOptions{StreamKeepAlive: -1})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	sid := initialize(t, srv, legacyVersion, nil, nil)
	get := func(session string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		if session != "" {
			req.Header.Set(core.HeaderSessionID, session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := get(""); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET without session: HTTP %d", res.StatusCode)
	} else {
		res.Body.Close()
	}
	if res := get("nope"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET with unknown session: HTTP %d", res.StatusCode)
	} else {
		res.Body.Close()
	}
	res := get(sid)
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream: HTTP %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &sseStream{t: t, res: res, cancel: func() {}, events: make(chan json.RawMessage, 8), done: make(chan error, 1)}
	go s.read()
	core.AddTool(srv, &core.Tool{Name: "late"}, add)
	raw := s.nextRaw(5 * time.Second)
	if m := decode(t, raw).(map[string]any); m["method"] != "notifications/tools/list_changed" || has(m, "id") {
		t.Errorf("GET stream event %s", raw)
	}
	validateSpec(t, legacyVersion, "ServerNotification", raw)
	srv.Close()
	s.ends(5 * time.Second)
}

// TestLegacyBridgeOrder checks that the server-to-client requests of one
// round reach a legacy client in the order of their input keys, as the keys
// of a 2026-07-28 inputRequests object are written (sorted), on the call's
// SSE stream and under SSE polling, over several calls: with 24 keys a
// random order is sorted once in 24! runs.
func TestLegacyBridgeOrder(t *testing.T) {
	t.Parallel()
	const n = 24
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
	}
	addAskMany := func(srv *core.Server) {
		core.AddTool(srv, &core.Tool{Name: "ask_many", Description: "Asks 24 questions at once."},
			func(ctx context.Context, req *core.CallToolRequest, _ noArgs) (string, error) {
				if req.Input.Len() == n {
					return "answered", nil
				}
				irs := core.InputRequests{}
				for _, k := range keys {
					irs[k] = core.ElicitForm(k, json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))
				}
				return "", core.InputRequired(irs, "")
			})
	}
	// order reads n server requests and returns the keys they carry (as
	// their message) in the order they arrived, and their ids.
	order := func(t *testing.T, next func() json.RawMessage) ([]string, []json.RawMessage) {
		t.Helper()
		var got []string
		var ids []json.RawMessage
		for range n {
			raw := next()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			}
			if err := json.Unmarshal(raw, &m); err != nil || m.Method != core.MethodElicit || len(m.ID) == 0 {
				t.Fatalf("event %s, want an elicitation/create request (%v)", raw, err)
			}
			got = append(got, m.Params.Message)
			ids = append(ids, m.ID)
		}
		return got, ids
	}
	okAnswer := map[string]any{"action": "accept", "content": map[string]any{"ok": true}}
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		srv := core.NewServer(testImpl, &core.ServerOptions{StreamKeepAlive: -1, BridgeTimeout: 10 * time.Second})
		addAskMany(srv)
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		sid := initialize(t, srv, legacyVersion, map[string]any{"elicitation": map[string]any{}}, nil)
		for run := range 3 {
			s := legacyStream(t, ts.URL, lreq(run, "tools/call", map[string]any{"name": "ask_many", "arguments": map[string]any{}}, legacyVersion, sid))
			got, ids := order(t, func() json.RawMessage { return s.nextRaw(10 * time.Second) })
			if strings.Join(got, ",") != strings.Join(keys, ",") {
				t.Fatalf("run %d: server requests in the order %v, want the key order %v", run, got, keys)
			}
			for _, id := range ids {
				answer(t, ts.URL, sid, legacyVersion, id, okAnswer)
			}
			if got := str(at(decode(t, s.nextRaw(10*time.Second)), "result", "content", 0, "text")); got != "answered" {
				t.Fatalf("run %d: result %q", run, got)
			}
			s.ends(5 * time.Second)
		}
	})
	t.Run("polling", func(t *testing.T) {
		t.Parallel()
		srv := core.NewServer(testImpl, &core.ServerOptions{StreamKeepAlive: -1})
		addAskMany(srv)
		ts := httptest.NewServer(bufferedHandler(srv))
		t.Cleanup(ts.Close)
		sid := initialize(t, srv, legacyVersion, map[string]any{"elicitation": map[string]any{}}, nil)
		for run := range 3 {
			r := lreq(run, "tools/call", map[string]any{"name": "ask_many", "arguments": map[string]any{}}, legacyVersion, sid).post(t, http.DefaultClient, ts.URL)
			if !r.SSE || len(r.Msgs) != n {
				t.Fatalf("run %d: HTTP %d, %d events, want %d server requests on an SSE stream", run, r.Status, len(r.Msgs), n)
			}
			i := 0
			got, _ := order(t, func() json.RawMessage { i++; return r.Msgs[i-1] })
			if strings.Join(got, ",") != strings.Join(keys, ",") {
				t.Fatalf("run %d: server requests in the order %v, want the key order %v", run, got, keys)
			}
		}
	})
}
