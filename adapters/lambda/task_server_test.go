package lambda_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
)

// These tests run the task events against real core.Servers in process:
// each server is one Lambda sandbox, and sandboxes share a task store, as
// they share store/dynamo on Lambda. The asynchronous invocation is the
// test calling the wrapped function with the event the runner was asked
// to send.

// queueRunner is a core.TaskRunner that queues the ids it is asked to
// start, as Lambda queues an asynchronous invocation.
type queueRunner chan string

func (q queueRunner) Start(_ context.Context, id string) error {
	select {
	case q <- id:
		return nil
	default:
		return errors.New("queue full")
	}
}

// sandbox is one instance of the function.
type sandbox struct {
	t      *testing.T
	fn     func(context.Context, json.RawMessage) (any, error)
	srv    *core.Server
	queue  queueRunner
	logged *strings.Builder
}

type taskTools struct {
	started chan string // task ids, as the tools start
	mu      sync.Mutex
	ended   map[string]error // the context error each tool saw when it returned
}

func newSandbox(t *testing.T, store core.TaskStore, tools *taskTools, opts *core.ServerOptions) *sandbox {
	t.Helper()
	sb := &sandbox{t: t, queue: make(queueRunner, 8)}
	o := core.ServerOptions{}
	if opts != nil {
		o = *opts
	}
	o.TaskStore, o.TaskRunner = store, sb.queue
	o.Logger = slog.New(slog.DiscardHandler)
	sb.srv = core.NewServer(core.Implementation{Name: "tasks", Version: "1.0.0"}, &o)
	t.Cleanup(func() { sb.srv.Close() })
	task := &core.ToolOptions{TaskSupport: core.TaskRequired}
	core.AddTool(sb.srv, &core.Tool{Name: "work"}, func(ctx context.Context, req *core.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		tools.started <- req.TaskID()
		return "done: " + in.Text, nil
	}, task)
	core.AddTool(sb.srv, &core.Tool{Name: "wait"}, func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
		tools.started <- req.TaskID()
		<-ctx.Done()
		tools.mu.Lock()
		tools.ended[req.TaskID()] = ctx.Err()
		tools.mu.Unlock()
		return "", ctx.Err()
	}, task)
	sb.fn = lambda.Wrap(sb.srv, nil)
	return sb
}

func newTaskTools() *taskTools {
	return &taskTools{started: make(chan string, 8), ended: map[string]error{}}
}

// rpc sends a 2026-07-28 request declaring the Tasks extension as a
// Function URL event, and returns the JSON-RPC result (or fails).
func (sb *sandbox) rpc(method, name string, params map[string]any) map[string]any {
	sb.t.Helper()
	res := sb.send(method, name, params)
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Body), &out); err != nil || out.Result == nil {
		sb.t.Fatalf("%s: %d %s", method, res.StatusCode, res.Body)
	}
	return out.Result
}

// send sends the request of rpc and returns the Function URL response.
func (sb *sandbox) send(method, name string, params map[string]any) events.LambdaFunctionURLResponse {
	sb.t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	headers := map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream",
		"mcp-protocol-version": "2026-07-28", "mcp-method": method}
	if name != "" {
		headers["mcp-name"] = name
	}
	ev, _ := json.Marshal(events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/mcp", Headers: headers, Body: string(body),
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	})
	v, err := sb.fn(context.Background(), ev)
	if err != nil {
		sb.t.Fatal(err)
	}
	res, ok := v.(events.LambdaFunctionURLResponse)
	if !ok {
		sb.t.Fatalf("%s: response %T", method, v)
	}
	return res
}

func (sb *sandbox) create(tool string, args map[string]any) string {
	sb.t.Helper()
	res := sb.rpc("tools/call", tool, map[string]any{"name": tool, "arguments": args})
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		sb.t.Fatalf("tools/call %s: %v", tool, res)
	}
	select {
	case queued := <-sb.queue:
		if queued != id {
			sb.t.Fatalf("runner asked to start %q, the task is %q", queued, id)
		}
	default:
		sb.t.Fatal("the runner was not asked to start the task")
	}
	return id
}

func (sb *sandbox) get(id string) map[string]any {
	sb.t.Helper()
	return sb.rpc("tasks/get", id, map[string]any{"taskId": id})
}

// event runs the task event of id, as the asynchronous invocation does,
// with ctx as the invocation's context.
func (sb *sandbox) event(ctx context.Context, id string) lambda.TaskAnswer {
	sb.t.Helper()
	payload, _ := lambda.TaskEvent(id)
	v, err := sb.fn(ctx, payload)
	if err != nil {
		sb.t.Fatal(err)
	}
	a, ok := v.(lambda.TaskAnswer)
	if !ok {
		sb.t.Fatalf("task event answered %T", v)
	}
	return a
}

func status(res map[string]any) string { s, _ := res["status"].(string); return s }

// TestTaskEventServer: a task created through one sandbox's Function URL
// event runs when its task event reaches another sandbox, and its result is
// read through the first; the event of an unknown task, and the replay of a
// finished task's event, run nothing.
func TestTaskEventServer(t *testing.T) {
	t.Parallel()
	store := &memory.TaskStore{}
	tools := newTaskTools()
	a, b := newSandbox(t, store, tools, nil), newSandbox(t, store, tools, nil)

	id := a.create("work", map[string]any{"text": "hi"})
	if got := status(a.get(id)); got != "working" {
		t.Fatalf("before the task event: %s", got)
	}
	if ans := b.event(context.Background(), id); ans.TaskID != id || ans.Error != "" {
		t.Fatalf("task event: %+v", ans)
	}
	if got := <-tools.started; got != id {
		t.Errorf("tool ran task %q, want %q", got, id)
	}
	res := a.get(id)
	if status(res) != "completed" || !strings.Contains(toJSON(res["result"]), "done: hi") {
		t.Fatalf("after the task event: %v", res)
	}

	if ans := b.event(context.Background(), id); ans.Error != "" {
		t.Errorf("replay: %+v", ans)
	}
	if ans := b.event(context.Background(), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); ans.Error != "lambda: no such task" {
		t.Errorf("unknown task: %+v", ans)
	}
	select {
	case got := <-tools.started:
		t.Errorf("a replayed or unknown task event ran task %q", got)
	default:
	}
	if got := a.get(id); toJSON(got["result"]) != toJSON(res["result"]) {
		t.Errorf("the replay changed the result: %v, was %v", got, res)
	}
}

// TestTaskEventCancel: a tasks/cancel answered by one sandbox reaches the
// handler running in another sandbox's asynchronous invocation, through
// the store (the run reads its task every poll interval), and the task
// ends cancelled.
func TestTaskEventCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		tools := newTaskTools()
		a, b := newSandbox(t, store, tools, nil), newSandbox(t, store, tools, nil)
		id := a.create("wait", map[string]any{})

		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // Lambda's longest timeout
		defer cancel()
		done := make(chan lambda.TaskAnswer, 1)
		go func() { done <- b.event(ctx, id) }()
		<-tools.started
		start := time.Now()

		a.rpc("tasks/cancel", id, map[string]any{"taskId": id})
		ans := <-done
		if ans.Error != "" {
			t.Errorf("task event: %+v", ans)
		}
		if d := time.Since(start); d > core.DefaultTaskPollInterval {
			t.Errorf("the cancellation reached the handler after %v, want within the poll interval %v", d, core.DefaultTaskPollInterval)
		}
		tools.mu.Lock()
		err := tools.ended[id]
		tools.mu.Unlock()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the handler's context ended with %v, want context.Canceled", err)
		}
		if got := status(a.get(id)); got != "cancelled" {
			t.Errorf("after the cancellation: %s, want cancelled", got)
		}
	})
}

// TestTaskEventDeadline: a task still running near the end of its
// invocation fails, recorded before the invocation ends (two seconds before
// its deadline), rather than staying working until its lease passes.
func TestTaskEventDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		tools := newTaskTools()
		a := newSandbox(t, store, tools, nil)
		id := a.create("wait", map[string]any{})

		deadline := time.Now().Add(time.Minute)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if ans := a.event(ctx, id); ans.Error != "" {
			t.Errorf("task event: %+v", ans)
		}
		if left := time.Until(deadline); left != 2*time.Second {
			t.Errorf("the run ended %v before the invocation's deadline, want 2s", left)
		}
		res := a.get(id)
		if status(res) != "failed" || !strings.Contains(toJSON(res["error"]), "ended before its handler finished") {
			t.Errorf("after the deadline: %v, want failed", res)
		}
	})
}

// freezable is a task store as one sandbox sees it: while frozen (Lambda
// froze the sandbox, or killed it), its calls do not reach the store.
type freezable struct {
	core.TaskStore
	mu     sync.Mutex
	thawed chan struct{} // nil while not frozen
}

func (f *freezable) wait() {
	f.mu.Lock()
	ch := f.thawed
	f.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (f *freezable) freeze() { f.mu.Lock(); f.thawed = make(chan struct{}); f.mu.Unlock() }
func (f *freezable) thaw()   { f.mu.Lock(); close(f.thawed); f.thawed = nil; f.mu.Unlock() }

func (f *freezable) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	f.wait()
	return f.TaskStore.Get(ctx, id)
}

func (f *freezable) Update(ctx context.Context, rec *core.TaskRecord) error {
	f.wait()
	return f.TaskStore.Update(ctx, rec)
}

// TestTaskEventFrozen: a sandbox frozen (or killed) in the middle of a task
// leaves it working until its lease passes, and failed from then on, as
// another sandbox reads it; a run that thaws after that learns it lost the
// task, and its outcome is dropped.
func TestTaskEventFrozen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		shared := &memory.TaskStore{}
		frozen := &freezable{TaskStore: shared}
		tools := newTaskTools()
		const lease = 30 * time.Second
		opts := &core.ServerOptions{TaskLease: lease}
		a, b := newSandbox(t, shared, tools, opts), newSandbox(t, frozen, tools, opts)
		id := a.create("wait", map[string]any{})

		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		done := make(chan lambda.TaskAnswer, 1)
		go func() { done <- b.event(ctx, id) }()
		<-tools.started
		frozen.freeze()
		frozenAt := time.Now()

		time.Sleep(lease / 2) // fake time: the bubble's clock
		if got := status(a.get(id)); got != "working" {
			t.Fatalf("within the lease: %s, want working", got)
		}
		time.Sleep(lease)
		res := a.get(id)
		if status(res) != "failed" {
			t.Fatalf("%v after the freeze (lease %v): %v, want failed", time.Since(frozenAt), lease, res)
		}

		frozen.thaw()
		<-done
		tools.mu.Lock()
		err := tools.ended[id]
		tools.mu.Unlock()
		if err == nil {
			t.Error("the thawed run's handler kept running")
		}
		if got := a.get(id); status(got) != "failed" || toJSON(got["error"]) != toJSON(res["error"]) {
			t.Errorf("after the thaw: %v, want the failure %v", got, res)
		}
	})
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A bound the caller reached reaches it through the Function URL as it
// does through net/http: HTTP 429 with Retry-After, and the -31429
// JSON-RPC error naming the bound.
func TestTaskLimitThroughFunctionURL(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, nil, newTaskTools(), &core.ServerOptions{MaxAnonymousTasks: 1})
	sb.create("work", map[string]any{"text": "a"})
	res := sb.send("tools/call", "work", map[string]any{"name": "work", "arguments": map[string]any{"text": "b"}})
	var out struct {
		Error struct {
			Code int `json:"code"`
			Data struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	json.Unmarshal([]byte(res.Body), &out)
	retry := ""
	for k, v := range res.Headers {
		if strings.EqualFold(k, "Retry-After") {
			retry = v
		}
	}
	if res.StatusCode != http.StatusTooManyRequests || retry == "" || out.Error.Code != core.CodeLimitExceeded || out.Error.Data.Reason != "too_many_tasks" {
		t.Fatalf("the call past the bound: HTTP %d, Retry-After %q, body %s", res.StatusCode, retry, res.Body)
	}
}
