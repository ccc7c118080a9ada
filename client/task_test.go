package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/mcp"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) from the
// client's side, against taskPeer: a server written here that speaks the
// extension's wire protocol and behaves as each test scripts it, hostile
// ones included. The peer is the other party, not the thing under test.

// taskPeer is a 2026-07-28 server of one tool, "job", which it always
// answers with a task; tasks/get answers with what get returns for the
// n-th poll (1-based), as a DetailedTask's members without resultType.
type taskPeer struct {
	t   testing.TB
	get func(n int) map[string]any
	// created are the CreateTaskResult's members (a task "T1", working,
	// by default).
	created map[string]any
	// status, when set, is the HTTP status of the n-th tasks/get (0:
	// answer it).
	status func(n int) int

	mu       sync.Mutex
	gets     []time.Time       // when each tasks/get came
	updates  []json.RawMessage // the inputResponses of each tasks/update
	cancels  int
	names    []string // Mcp-Name of each tasks/* request
	declared []bool   // whether each request declared the extension
	calls    int      // tools/call
}

func (p *taskPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID         string          `json:"taskId"`
			InputResponses json.RawMessage `json:"inputResponses"`
			Meta           struct {
				Caps struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, declared := m.Params.Meta.Caps.Extensions[mcp.ExtensionTasks]
	p.mu.Lock()
	p.declared = append(p.declared, declared)
	if strings.HasPrefix(m.Method, "tasks/") {
		p.names = append(p.names, r.Header.Get("Mcp-Name"))
	}
	var result any
	switch m.Method {
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "job", "inputSchema": map[string]any{"type": "object"}}}}
	case "tools/call":
		p.calls++
		if !declared {
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "synchronous"}}}
			break
		}
		c := map[string]any{"taskId": "T1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
			"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil, "pollIntervalMs": 1000}
		for k, v := range p.created {
			c[k] = v
		}
		c["resultType"] = "task"
		result = c
	case "tasks/get":
		p.gets = append(p.gets, time.Now())
		n := len(p.gets)
		p.mu.Unlock()
		if p.status != nil {
			if code := p.status(n); code != 0 {
				http.Error(w, "unavailable", code)
				return
			}
		}
		g := p.get(n)
		p.mu.Lock()
		t := map[string]any{"taskId": m.Params.TaskID, "createdAt": "2026-01-01T00:00:00Z",
			"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil}
		for k, v := range g {
			t[k] = v
		}
		t["resultType"] = "complete"
		result = t
	case "tasks/update":
		p.updates = append(p.updates, m.Params.InputResponses)
		result = map[string]any{"resultType": "complete"}
	case "tasks/cancel":
		p.cancels++
		result = map[string]any{"resultType": "complete"}
	default:
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`, m.ID, m.Method)
		return
	}
	p.mu.Unlock()
	b, _ := json.Marshal(result)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, b)
}

func (p *taskPeer) stats() (gets []time.Time, updates []json.RawMessage, cancels int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.gets...), append([]json.RawMessage(nil), p.updates...), p.cancels
}

// connectPeer serves p on a real loopback listener and connects a modern
// client with opts (Mode and, unless set, Tasks filled in).
func connectPeer(t *testing.T, p *taskPeer, opts client.Options) *client.Conn {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return connectTo(t, srv.URL, opts)
}

// connectPipe serves p over in-memory connections, for tests in a
// synctest bubble.
func connectPipe(t *testing.T, p *taskPeer, opts client.Options) *client.Conn {
	t.Helper()
	opts.HTTPClient = mcptest.Serve(t, p)
	return connectTo(t, "http://tasks.test/mcp", opts)
}

func connectTo(t *testing.T, url string, opts client.Options) *client.Conn {
	t.Helper()
	opts.Mode = client.ModeModern
	c, err := client.Connect(t.Context(), url, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func working(ms any) map[string]any {
	return map[string]any{"status": "working", "pollIntervalMs": ms}
}

func completed(text string, isError bool) map[string]any {
	return map[string]any{"status": "completed", "pollIntervalMs": 1000, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError}}
}

func askName(keys ...string) map[string]any {
	reqs := map[string]any{}
	for _, k := range keys {
		reqs[k] = map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "name?", "requestedSchema": map[string]any{"type": "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}}}}}
	}
	return map[string]any{"status": "input_required", "statusMessage": "waiting", "pollIntervalMs": 1000, "inputRequests": reqs}
}

// TestTaskCallTool: CallTool on a client that declares the extension
// waits for the task: it polls tasks/get, answers the task's elicitation
// with the Elicitation handler once although three polls list its key
// (the server is slow to see the answer), and returns the completed
// task's CallToolResult (CallOptions.RawResult gets it as sent). Every request
// declares the extension, and every tasks/* request names the task in
// Mcp-Name. CallOptions.TaskStatus sees each change of status.
func TestTaskCallTool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, get: func(n int) map[string]any {
			switch {
			case n == 1:
				return working(10)
			case n <= 4:
				return askName("name")
			case n == 5:
				return working(10)
			}
			return completed("Hello, Luca!", false)
		}}
		asked := 0
		c := connectPipe(t, p, client.Options{Tasks: true, Elicitation: func(ctx context.Context, req *client.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Luca"}}, nil
		}})
		var raw json.RawMessage
		var seen []string
		r, err := c.CallTool(t.Context(), "job", nil, &client.CallOptions{RawResult: &raw, TaskStatus: func(tk *mcp.DetailedTask) {
			seen = append(seen, string(tk.Status))
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Content) != 1 || r.IsError {
			t.Fatalf("result %+v", r)
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "Hello, Luca!" {
			t.Fatalf("content %#v", r.Content[0])
		}
		if !strings.Contains(string(raw), "Hello, Luca!") || strings.Contains(string(raw), "taskId") {
			t.Fatalf("raw result %s, want the task's result", raw)
		}
		gets, updates, cancels := p.stats()
		if asked != 1 || len(updates) != 1 || !strings.Contains(string(updates[0]), `"name":{"action":"accept","content":{"name":"Luca"}}`) {
			t.Fatalf("asked %d times, updates %s (want one)", asked, updates)
		}
		if len(gets) != 6 || cancels != 0 {
			t.Fatalf("%d tasks/get, %d tasks/cancel; want 6, 0", len(gets), cancels)
		}
		if got := strings.Join(seen, ","); got != "working,input_required,working,completed" {
			t.Fatalf("status changes %s", got)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		for i, d := range p.declared {
			if !d {
				t.Errorf("request %d did not declare the extension", i)
			}
		}
		for _, n := range p.names {
			if n != "T1" {
				t.Errorf("Mcp-Name %q, want T1", n)
			}
		}
	})
}

// TestTaskPollInterval: Wait waits pollIntervalMs between polls, within
// [MinTaskPollInterval, MaxTaskPollInterval]: a server suggesting 0 is
// polled every MinTaskPollInterval, one suggesting a year every
// MaxTaskPollInterval, one suggesting none every DefaultTaskPollInterval.
func TestTaskPollInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ms   any
		want time.Duration
	}{
		{"zero", 0, client.MinTaskPollInterval},
		{"negative", -5, client.MinTaskPollInterval},
		{"huge", int64(365 * 24 * time.Hour / time.Millisecond), client.MaxTaskPollInterval},
		{"absent", nil, client.DefaultTaskPollInterval},
		{"250ms", 250, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				g := working(tc.ms)
				if tc.ms == nil {
					delete(g, "pollIntervalMs")
				}
				p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": tc.ms}, get: func(n int) map[string]any {
					if n == 4 {
						return completed("done", false)
					}
					return g
				}}
				if tc.ms == nil {
					p.created = map[string]any{"pollIntervalMs": nil}
				}
				c := connectPipe(t, p, client.Options{Tasks: true})
				start := time.Now()
				if _, err := c.CallTool(t.Context(), "job", nil, nil); err != nil {
					t.Fatal(err)
				}
				gets, _, _ := p.stats()
				if len(gets) != 4 {
					t.Fatalf("%d polls, want 4", len(gets))
				}
				prev := start
				for i, g := range gets {
					if d := g.Sub(prev); d != tc.want {
						t.Fatalf("poll %d came %v after the last, want %v", i+1, d, tc.want)
					}
					prev = g
				}
			})
		})
	}
}

// TestTaskNeverEnds: a task that stays working is waited for until the
// call's deadline, with a last look shortly before it, and then cancelled
// with tasks/cancel although the call's context has ended; the polls are
// bounded by the deadline and the interval.
func TestTaskNeverEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, get: func(int) map[string]any { return working(4000) }}
		c := connectPipe(t, p, client.Options{Tasks: true})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.CallTool(ctx, "job", nil, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Fatalf("gave up after %v, want 10s", d)
		}
		gets, _, cancels := p.stats()
		// Polls at 1s (the created task's pollIntervalMs), 5s, 9s (the
		// interval), 9.9s (the last look before the deadline).
		if len(gets) != 4 || cancels != 1 {
			t.Fatalf("%d tasks/get, %d tasks/cancel; want 4, 1", len(gets), cancels)
		}
		if last := gets[len(gets)-1].Sub(start); last != 9900*time.Millisecond {
			t.Fatalf("last poll at %v, want 9.9s", last)
		}
	})
}

// TestTaskCancelOnContext: cancelling the call's context while the task
// runs sends tasks/cancel (on a context of its own) and returns the
// context's error.
func TestTaskCancelOnContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := &taskPeer{t: t, get: func(n int) map[string]any {
			if n == 2 {
				cancel()
			}
			return working(100)
		}}
		c := connectPipe(t, p, client.Options{Tasks: true})
		if _, err := c.CallTool(ctx, "job", nil, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if _, _, cancels := p.stats(); cancels != 1 {
			t.Fatalf("%d tasks/cancel, want 1", cancels)
		}
	})
}

// TestTaskOutcomes: completed with isError is a result (IsError set), not
// an error; failed is the task's JSON-RPC error as an *mcp.Error;
// cancelled matches ErrTaskCancelled and carries the statusMessage. None
// of them is cancelled again.
func TestTaskOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		final map[string]any
		check func(t *testing.T, r *mcp.CallToolResult, err error)
	}{
		{"isError", completed("bad input", true), func(t *testing.T, r *mcp.CallToolResult, err error) {
			if err != nil || !r.IsError {
				t.Fatalf("result %+v, err %v; want IsError", r, err)
			}
		}},
		{"failed", map[string]any{"status": "failed", "statusMessage": "boom", "error": map[string]any{"code": -32603, "message": "backend exploded"}},
			func(t *testing.T, r *mcp.CallToolResult, err error) {
				var re *mcp.Error
				if !errors.As(err, &re) || re.Code != -32603 || re.Message != "backend exploded" || re.Method() != "tools/call" {
					t.Fatalf("err = %v, want the task's -32603", err)
				}
			}},
		{"cancelled", map[string]any{"status": "cancelled", "statusMessage": "operator stopped it"},
			func(t *testing.T, r *mcp.CallToolResult, err error) {
				if !errors.Is(err, client.ErrTaskCancelled) || !strings.Contains(err.Error(), "operator stopped it") {
					t.Fatalf("err = %v, want ErrTaskCancelled with the message", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": 0}, get: func(int) map[string]any { return tc.final }}
			c := connectPeer(t, p, client.Options{Tasks: true})
			r, err := c.CallTool(t.Context(), "job", nil, nil)
			tc.check(t, r, err)
			if _, _, cancels := p.stats(); cancels != 0 {
				t.Fatalf("%d tasks/cancel for an ended task", cancels)
			}
		})
	}
}

// TestTaskRepeatedAndNewKeys: a server that keeps asking (the same key on
// every poll, and a new one each time) gets each key answered once and at
// most Options.MaxRounds tasks/update; the next round is a
// *MaxRoundsError, and the task is cancelled.
func TestTaskRepeatedAndNewKeys(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": 0}, get: func(n int) map[string]any {
			return askName("same", fmt.Sprintf("new%d", n))
		}}
		asked := 0
		c := connectPipe(t, p, client.Options{Tasks: true, MaxRounds: 3, Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}})
		_, err := c.CallTool(t.Context(), "job", nil, nil)
		var mr *client.MaxRoundsError
		if !errors.As(err, &mr) || mr.Rounds != 3 {
			t.Fatalf("err = %v, want a MaxRoundsError after 3 rounds", err)
		}
		_, updates, cancels := p.stats()
		if len(updates) != 3 || asked != 4 || cancels != 1 {
			t.Fatalf("%d tasks/update, %d answers, %d tasks/cancel; want 3, 4, 1", len(updates), asked, cancels)
		}
		for i, u := range updates[1:] {
			if strings.Contains(string(u), `"same"`) {
				t.Fatalf("update %d answers the key answered before: %s", i+2, u)
			}
		}
	})
}

// TestTaskHugeInputRequests: one poll asking for more than 64 inputs at
// once is a protocol error before any handler runs, and the task is
// cancelled; a tasks/get result beyond MaxResponseBytes is an error of the
// response bound.
func TestTaskHugeInputRequests(t *testing.T) {
	t.Parallel()
	t.Run("keys", func(t *testing.T) {
		t.Parallel()
		keys := make([]string, 65)
		for i := range keys {
			keys[i] = fmt.Sprint("k", i)
		}
		p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": 0}, get: func(int) map[string]any { return askName(keys...) }}
		asked := 0
		c := connectPeer(t, p, client.Options{Tasks: true, Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return nil, nil
		}})
		if _, err := c.CallTool(t.Context(), "job", nil, nil); !errors.Is(err, client.ErrProtocol) {
			t.Fatalf("err = %v, want ErrProtocol", err)
		}
		if _, updates, cancels := p.stats(); asked != 0 || len(updates) != 0 || cancels != 1 {
			t.Fatalf("%d answers, %d updates, %d cancels; want 0, 0, 1", asked, len(updates), cancels)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		big := askName("k")
		big["statusMessage"] = strings.Repeat("x", 1<<20)
		p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": 0}, get: func(int) map[string]any { return big }}
		c := connectPeer(t, p, client.Options{Tasks: true, MaxResponseBytes: 64 << 10, Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a handler ran for an oversized response")
			return nil, nil
		}})
		if _, err := c.CallTool(t.Context(), "job", nil, nil); err == nil {
			t.Fatal("an oversized tasks/get result was accepted")
		}
		if _, _, cancels := p.stats(); cancels != 1 {
			t.Fatalf("%d cancels, want 1", cancels)
		}
	})
}

// TestTaskHostileAnswers: a tasks/get for another task id, or with an
// unknown status, is a protocol error.
func TestTaskHostileAnswers(t *testing.T) {
	t.Parallel()
	for name, g := range map[string]map[string]any{
		"other id":              {"taskId": "T2", "status": "working"},
		"unknown status":        {"status": "paused"},
		"completed, no result":  {"status": "completed"},
		"failed, no error":      {"status": "failed"},
		"input, no requests":    {"status": "input_required"},
		"created without an id": nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := &taskPeer{t: t, created: map[string]any{"pollIntervalMs": 0}, get: func(int) map[string]any { return g }}
			if g == nil {
				p.created["taskId"] = ""
			}
			c := connectPeer(t, p, client.Options{Tasks: true})
			if _, err := c.CallTool(t.Context(), "job", nil, nil); !errors.Is(err, client.ErrProtocol) {
				t.Fatalf("err = %v, want ErrProtocol", err)
			}
		})
	}
}

// TestTaskNotDeclared: without Options.Tasks the extension is not
// declared (the server answers synchronously), and a CreateTaskResult a
// server sends anyway is an invalid response (SEP-2663 §Capability
// Negotiation).
func TestTaskNotDeclared(t *testing.T) {
	t.Parallel()
	p := &taskPeer{t: t, get: func(int) map[string]any { return completed("x", false) }}
	c := connectPeer(t, p, client.Options{})
	r, err := c.CallTool(t.Context(), "job", nil, nil)
	if err != nil || r.Content[0].(*mcp.TextContent).Text != "synchronous" {
		t.Fatalf("result %+v, err %v; want the synchronous result", r, err)
	}
	// A server that sends a task to a client that did not ask for one.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		if m.Method == "tools/list" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"task","taskId":"T","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}}`, m.ID)
	}))
	defer srv.Close()
	c2 := connectTo(t, srv.URL, client.Options{})
	if _, err := c2.CallTool(t.Context(), "job", nil, nil); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
	if _, err := c2.GetPrompt(t.Context(), "p", nil, nil); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("prompts/get answered with a task: err = %v, want ErrProtocol", err)
	}
}

// TestTaskResume: CallToolTask hands out the task at once; another Client
// (a process restarted with the persisted id) resumes it with Conn.Task
// and Wait, which polls at once and answers its input; Wait on a context
// that ends leaves the task running (no tasks/cancel).
func TestTaskResume(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, get: func(n int) map[string]any {
			if n < 3 {
				return askName("name")
			}
			return completed("resumed", false)
		}}
		hc := mcptest.Serve(t, p)
		url := "http://tasks.test/mcp"
		a := connectTo(t, url, client.Options{Tasks: true, HTTPClient: hc})
		r, h, err := a.CallToolTask(t.Context(), "job", nil, nil)
		if err != nil || r != nil || h == nil || h.ID() != "T1" {
			t.Fatalf("CallToolTask: %v, %v, %v", r, h, err)
		}
		if gets, _, _ := p.stats(); len(gets) != 0 {
			t.Fatalf("CallToolTask polled %d times", len(gets))
		}
		// Waiting with a context that has ended leaves the task alone.
		ended, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := h.Wait(ended); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait on an ended context: %v", err)
		}
		b := connectTo(t, url, client.Options{Tasks: true, HTTPClient: hc, Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "x"}}, nil
		}})
		var raw json.RawMessage
		res, err := b.Task(h.ID(), &client.CallOptions{RawResult: &raw}).Wait(t.Context())
		if err != nil || res.Content[0].(*mcp.TextContent).Text != "resumed" || !strings.Contains(string(raw), "resumed") {
			t.Fatalf("resumed Wait: %+v, %v (raw %s)", res, err, raw)
		}
		if _, updates, cancels := p.stats(); len(updates) != 1 || cancels != 0 {
			t.Fatalf("%d updates, %d cancels; want 1, 0", len(updates), cancels)
		}
		// Get and Cancel, one request each.
		tk, err := b.Task("T1", nil).Get(t.Context())
		if err != nil || tk.Status != mcp.TaskCompleted {
			t.Fatalf("Get: %+v, %v", tk, err)
		}
		if err := b.Task("T1", nil).Cancel(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, cancels := p.stats(); cancels != 1 {
			t.Fatalf("%d cancels after Cancel, want 1", cancels)
		}
	})
}

// TestTaskTransientFailures: up to two tasks/get in a row that fail in
// transport (here HTTP 503 without a JSON-RPC body, with the HTTP-level
// retries of Options.MaxRetries turned off) are retried a poll interval
// later; a third in a row ends the wait, and the task is cancelled. With
// the default retries, each 503 is first sent again twice by the HTTP
// layer: nine 503s in a row end the wait.
func TestTaskTransientFailures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, status: func(n int) int {
			if n <= 2 || (n >= 4 && n <= 6) {
				return http.StatusServiceUnavailable
			}
			return 0
		}, get: func(n int) map[string]any { return working(100) }}
		c := connectPipe(t, p, client.Options{Tasks: true, MaxRetries: -1})
		_, err := c.CallTool(t.Context(), "job", nil, nil)
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("err = %v, want the third 503 in a row", err)
		}
		if gets, _, cancels := p.stats(); len(gets) != 6 || cancels != 1 {
			t.Fatalf("%d tasks/get, %d tasks/cancel; want 6, 1", len(gets), cancels)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := &taskPeer{t: t, status: func(n int) int {
			if n <= 8 || n >= 10 && n <= 18 {
				return http.StatusServiceUnavailable
			}
			return 0
		}, get: func(n int) map[string]any { return working(100) }}
		c := connectPipe(t, p, client.Options{Tasks: true})
		_, err := c.CallTool(t.Context(), "job", nil, nil)
		if !errors.Is(err, client.ErrRetryLater) {
			t.Fatalf("err = %v, want the ninth 503 in a row", err)
		}
		if gets, _, cancels := p.stats(); len(gets) != 18 || cancels != 1 {
			t.Fatalf("%d tasks/get, %d tasks/cancel; want 18, 1", len(gets), cancels)
		}
	})
}
