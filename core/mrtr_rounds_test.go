package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
)

// askForever registers a tool that asks for input every time it runs.
func askForever(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "ask_forever", Description: "Never satisfied."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("Again?",
				json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "again")
		})
}

// checkTooManyRounds fails unless e is the error of a request that asked
// for input more than max times.
func checkTooManyRounds(t *testing.T, e *mcptest.RPCError, max int) {
	t.Helper()
	if e == nil {
		t.Fatalf("no error after %d rounds of input", max)
	}
	if e.Code != core.CodeInternalError || !strings.Contains(e.Message, fmt.Sprintf("asked for input more than %d times", max)) {
		t.Fatalf("error %d %q, want -32603 saying the request asked for input more than %d times", e.Code, e.Message, max)
	}
}

// A 2026-07-28 call that keeps asking for input is refused once it has asked
// MaxInputRounds times: the count travels in the sealed requestState.
func TestMaxInputRoundsModern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		max  int // 0: the default
	}{{"default", 0}, {"option", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := core.NewServer(core.Implementation{Name: "r", Version: "1"}, &core.ServerOptions{MaxInputRounds: tc.max})
			askForever(srv)
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			want := tc.max
			if want == 0 {
				want = core.DefaultMaxInputRounds
			}
			c := &mcptest.Client{URL: ts.URL, Caps: map[string]any{"elicitation": map[string]any{}}}
			state := ""
			for round := 1; ; round++ {
				params := map[string]any{"name": "ask_forever", "arguments": map[string]any{}}
				if state != "" {
					params["requestState"] = state
					params["inputResponses"] = map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
				}
				r, err := c.Call(context.Background(), "tools/call", params, nil)
				if err != nil {
					t.Fatal(err)
				}
				if round > want {
					checkTooManyRounds(t, r.Error, want)
					return
				}
				var res struct {
					ResultType   string `json:"resultType"`
					RequestState string `json:"requestState"`
				}
				if err := r.Decode(&res); err != nil || res.ResultType != "input_required" || res.RequestState == "" {
					t.Fatalf("round %d: %v %s", round, err, r.Messages)
				}
				state = res.RequestState
			}
		})
	}
}

// A legacy call whose tool keeps asking for input gets MaxInputRounds rounds
// of server-to-client requests, then the error.
func TestMaxInputRoundsLegacy(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "r", Version: "1"}, &core.ServerOptions{MaxInputRounds: 3, StreamKeepAlive: -1})
	askForever(srv)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.LegacyCall(context.Background(), "tools/call", map[string]any{"name": "ask_forever", "arguments": map[string]any{}},
		func(method string, params json.RawMessage) (any, error) {
			return map[string]any{"action": "accept", "content": map[string]any{"ok": true}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ServerRequests) != 3 {
		t.Errorf("%d server requests, want 3", len(r.ServerRequests))
	}
	checkTooManyRounds(t, r.Error, 3)
}

// bufferedHandler serves h as a platform without response streaming does:
// nothing reaches the client before h returns.
func bufferedHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r.WithContext(core.NewContextBuffered(r.Context())))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// On a buffered platform (SSE polling), rounds are counted across the
// client's reconnections: after MaxInputRounds the resumed call gets the
// error.
func TestMaxInputRoundsPolling(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "r", Version: "1"}, &core.ServerOptions{MaxInputRounds: 2})
	askForever(srv)
	ts := httptest.NewServer(bufferedHandler(srv))
	t.Cleanup(ts.Close)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(context.Background(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	send := func(method string, body []byte, lastEventID string) []sseEvent {
		t.Helper()
		return sessionEvents(context.Background(), t, c, method, body, lastEventID)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "ask_forever", "arguments": map[string]any{}}})
	events := send(http.MethodPost, call, "")
	for round := 1; ; round++ {
		if len(events) != 1 {
			t.Fatalf("round %d: %d events, want 1: %v", round, len(events), events)
		}
		var m struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Error  *mcptest.RPCError `json:"error"`
		}
		if err := json.Unmarshal([]byte(events[0].data), &m); err != nil {
			t.Fatal(err)
		}
		if round > 2 {
			if string(m.ID) != "9" {
				t.Fatalf("final message %s, want the response to 9", events[0].data)
			}
			checkTooManyRounds(t, m.Error, 2)
			return
		}
		if m.Method != core.MethodElicit || events[0].id == "" {
			t.Fatalf("round %d: %s (id %q), want an elicitation with an event id", round, events[0].data, events[0].id)
		}
		ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"result": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}})
		r, err := c.Post(context.Background(), ans, http.Header{"Mcp-Protocol-Version": {c.Version}}, nil)
		if err != nil || r.Status != http.StatusAccepted {
			t.Fatalf("posting the answer: %v %v", err, r)
		}
		events = send(http.MethodGet, nil, events[0].id)
	}
}

// A resumed call (SSE polling) that the client cancels with
// notifications/cancelled gets no response, as any cancelled legacy request
// (2025-11-25 basic/utilities/cancellation: the receiver SHOULD NOT
// respond), not an error.
func TestPolledCallCancelled(t *testing.T) {
	t.Parallel()
	srv := core.NewServer(core.Implementation{Name: "r", Version: "1"}, nil)
	resumed := make(chan struct{})
	core.AddTool(srv, &core.Tool{Name: "ask_then_wait", Description: "Asks, then waits to be cancelled."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			if req.Input.Len() == 0 {
				return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("Go on?",
					json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}, "")
			}
			close(resumed)
			<-ctx.Done()
			return "", ctx.Err()
		})
	ts := httptest.NewServer(bufferedHandler(srv))
	t.Cleanup(ts.Close)
	c := &mcptest.Client{URL: ts.URL}
	if _, err := c.Initialize(t.Context(), core.ProtocolVersion20251125, map[string]any{"elicitation": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	send := func(method string, body []byte, lastEventID string) *http.Response {
		res, err := sessionRequest(t.Context(), c, method, body, lastEventID)
		if err != nil {
			t.Error(err)
			return nil
		}
		return res
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "ask_then_wait", "arguments": map[string]any{}}})
	events := readAllEvents(t, send(http.MethodPost, call, ""))
	if len(events) != 1 || events[0].id == "" {
		t.Fatalf("first round: %v, want one elicitation with an event id", events)
	}
	var asked struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(events[0].data), &asked); err != nil {
		t.Fatal(err)
	}
	ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": asked.ID,
		"result": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}})
	if r, err := c.Post(t.Context(), ans, http.Header{"Mcp-Protocol-Version": {c.Version}}, nil); err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("posting the answer: %v %v", err, r)
	}
	got := make(chan *http.Response, 1)
	go func() { got <- send(http.MethodGet, nil, events[0].id) }()
	select {
	case <-resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not resumed")
	}
	cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": 9}})
	if r, err := c.Post(t.Context(), cancel, http.Header{"Mcp-Protocol-Version": {c.Version}}, nil); err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("posting the cancellation: %v %v", err, r)
	}
	res := <-got
	if res == nil {
		t.FailNow()
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if bytes.Contains(body, []byte(`"id":9`)) || (res.StatusCode != http.StatusNoContent && res.StatusCode != http.StatusOK) {
		t.Errorf("the cancelled call was answered: HTTP %d %s", res.StatusCode, body)
	}
}
