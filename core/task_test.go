package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
	"github.com/mcpfn/mcpfn/store/storetest"
)

// taskCaps declares the Tasks extension in a request's capabilities.
// (and elicitation, which the input tools ask for).
var taskCaps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{core.ExtensionTasks: map[string]any{}}}

// taskReq is a tasks/* request declaring the extension, with Mcp-Name set
// to the task id as the routing headers require.
func taskReq(id any, method, taskID string, extra map[string]any) *testReq {
	p := map[string]any{"taskId": taskID}
	for k, v := range extra {
		p[k] = v
	}
	return mreq(id, method, p).withCaps(taskCaps).withHeader(core.HeaderName, taskID)
}

// subjectAuth authenticates the caller named by the X-Subject header (no
// header: anonymous) and allows everything.
type subjectAuth struct{}

func (subjectAuth) Metadata(*http.Request) ([]byte, error) { return nil, nil }
func (subjectAuth) Authenticate(r *http.Request) (context.Context, error) {
	if s := r.Header.Get("X-Subject"); s != "" {
		return core.NewContextWithPrincipal(r.Context(), &core.Principal{Issuer: "https://issuer.test", Subject: s}), nil
	}
	return r.Context(), nil
}
func (subjectAuth) Authorize(context.Context, core.Operation) error { return nil }

type taskArgs struct {
	Wait bool   `json:"wait,omitempty"`
	Say  string `json:"say,omitempty"`
}

// taskFixture is a server with task tools whose handlers report to the
// test: started receives each run's context, release lets a waiting run
// finish.
type taskFixture struct {
	srv     *core.Server
	calls   atomic.Int32
	started chan context.Context
	release chan struct{}
}

func newTaskFixture(t *testing.T, o *core.ServerOptions) *taskFixture {
	t.Helper()
	if o == nil {
		o = &core.ServerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	f := &taskFixture{started: make(chan context.Context, 16), release: make(chan struct{})}
	f.srv = core.NewServer(core.Implementation{Name: "t", Version: "1"}, o)
	t.Cleanup(func() { f.srv.Close() })
	core.AddTool(f.srv, &core.Tool{Name: "job"},
		func(ctx context.Context, req *core.CallToolRequest, in taskArgs) (*core.CallToolResult, error) {
			f.calls.Add(1)
			if in.Wait {
				f.started <- ctx
				req.NotifyProgress(ctx, 1, 2, "halfway")
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-f.release:
				}
			}
			if in.Say == "tool-error" {
				return nil, core.ToolErrorf("it broke")
			}
			if in.Say == "rpc-error" {
				return nil, core.NewError(-32099, "protocol trouble")
			}
			where := "request"
			if id := req.TaskID(); id != "" {
				where = id[:4]
			}
			return &core.CallToolResult{Content: []core.Content{&core.TextContent{Text: "done " + in.Say + " in " + where}}}, nil
		}, &core.ToolOptions{TaskSupport: core.TaskOptional})
	core.AddTool(f.srv, &core.Tool{Name: "must_task"},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			f.calls.Add(1)
			return "ran", nil
		}, &core.ToolOptions{TaskSupport: core.TaskRequired})
	core.AddTool(f.srv, &core.Tool{Name: "ask"},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			f.calls.Add(1)
			a, okA := req.Input.Elicitation("a")
			b, okB := req.Input.Elicitation("b")
			if !okA || !okB {
				form := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)
				return "", core.InputRequired(core.InputRequests{"a": core.ElicitForm("A?", form), "b": core.ElicitForm("B?", form)}, "st")
			}
			if req.Input.State() != "st" {
				return "", core.ToolErrorf("state lost: %q", req.Input.State())
			}
			return a.Content["v"].(string) + b.Content["v"].(string), nil
		}, &core.ToolOptions{TaskSupport: core.TaskOptional})
	return f
}

// create calls tool as a task and returns the task id.
func (f *taskFixture) create(t *testing.T, tool string, args any, hdr ...string) string {
	t.Helper()
	r := callReq(1, tool, args).withCaps(taskCaps)
	for i := 0; i+1 < len(hdr); i += 2 {
		r = r.withHeader(hdr[i], hdr[i+1])
	}
	res := r.do(t, f.srv).result(t)
	if res["resultType"] != "task" {
		t.Fatalf("tools/call of %s: resultType %v, want task: %v", tool, res["resultType"], res)
	}
	for _, k := range []string{"requestState", "result", "error", "inputRequests", "task"} {
		if _, ok := res[k]; ok {
			t.Fatalf("CreateTaskResult carries %q: %v", k, res)
		}
	}
	id := str(res["taskId"])
	if len(id) < 40 || res["status"] != "working" || !has(res, "createdAt") || !has(res, "ttlMs") || !has(res, "pollIntervalMs") {
		t.Fatalf("CreateTaskResult = %v", res)
	}
	return id
}

func (f *taskFixture) get(t *testing.T, id string, hdr ...string) map[string]any {
	t.Helper()
	r := taskReq(2, "tasks/get", id, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r = r.withHeader(hdr[i], hdr[i+1])
	}
	res := r.do(t, f.srv).result(t)
	if res["resultType"] != "complete" || res["taskId"] != id {
		t.Fatalf("tasks/get = %v", res)
	}
	return res
}

// await polls tasks/get (in a synctest bubble, where waiting costs no
// time) until the task has status want.
func (f *taskFixture) await(t *testing.T, id, want string) map[string]any {
	t.Helper()
	for range 1000 {
		res := f.get(t, id)
		if res["status"] == want {
			return res
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s never reached %s", id, want)
	return nil
}

func TestTaskLifecycleCompletes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		id := f.create(t, "job", map[string]any{"say": "hi"})
		res := f.await(t, id, "completed")
		if got := textOf(res["result"].(map[string]any)); got != "done hi in "+id[:4] {
			t.Fatalf("inlined result text = %q", got)
		}
		if has(res, "error") || has(res, "inputRequests") || at(res, "result", "resultType") != "complete" {
			t.Fatalf("completed task = %v (the inlined result is a whole 2026-07-28 CallToolResult, resultType included)", res)
		}
		inlined, _ := json.Marshal(res["result"])
		validateSpec(t, modernVersion, "CallToolResult", inlined)
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
	})
}

func TestTaskToolErrorCompletesAndRPCErrorFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		res := f.await(t, f.create(t, "job", map[string]any{"say": "tool-error"}), "completed")
		if at(res, "result", "isError") != true || textOf(res["result"].(map[string]any)) != "it broke" {
			t.Fatalf("tool error task = %v", res)
		}
		res = f.await(t, f.create(t, "job", map[string]any{"say": "rpc-error"}), "failed")
		if num(t, at(res, "error", "code")) != -32099 || at(res, "error", "message") != "protocol trouble" || has(res, "result") {
			t.Fatalf("protocol error task = %v", res)
		}
	})
}

func TestTaskSupportRules(t *testing.T) {
	t.Parallel()
	f := newTaskFixture(t, nil)
	// A required tool without the declaration: -32021 naming the extension,
	// before the handler runs.
	e := callReq(1, "must_task", nil).do(t, f.srv).wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
	if !has(e, "data", "requiredCapabilities", "extensions", core.ExtensionTasks) {
		t.Fatalf("-32021 data = %v", e["data"])
	}
	// An optional tool without the declaration runs synchronously.
	res := callReq(2, "job", map[string]any{"say": "sync"}).do(t, f.srv).result(t)
	if res["resultType"] != "complete" || has(res, "taskId") || !strings.HasPrefix(textOf(res), "done sync") {
		t.Fatalf("optional tool, no declaration = %v", res)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("handler calls = %d, want 1", n)
	}
	// A legacy "task" member is ignored.
	res = callReq(3, "job", map[string]any{"say": "x"}).withParam("task", map[string]any{"ttl": 1000}).do(t, f.srv).result(t)
	if res["resultType"] != "complete" {
		t.Fatalf("legacy task member: %v", res)
	}
	// The tasks methods need the declaration.
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		mreq(4, m, map[string]any{"taskId": "x"}).withHeader(core.HeaderName, "x").do(t, f.srv).
			wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
	}
	// Unknown ids: -32602.
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		taskReq(5, m, "nope", nil).do(t, f.srv).wantError(t, http.StatusOK, core.CodeInvalidParams)
	}
	// server/discover advertises the extension.
	d := mreq(6, "server/discover", nil).do(t, f.srv).result(t)
	if !has(d, "capabilities", "extensions", core.ExtensionTasks) {
		t.Fatalf("discover capabilities = %v", d["capabilities"])
	}
}

func TestTaskRoutingHeaders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		id := f.create(t, "job", map[string]any{})
		// Mcp-Name must be present and equal params.taskId.
		r := taskReq(1, "tasks/get", id, nil)
		r.hdr.Del(core.HeaderName)
		r.do(t, f.srv).wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
		taskReq(2, "tasks/get", id, nil).withHeader(core.HeaderName, "other").do(t, f.srv).
			wantError(t, http.StatusBadRequest, core.CodeHeaderMismatch)
		f.await(t, id, "completed")
	})
}

func TestTaskLegacyClientRunsSynchronously(t *testing.T) {
	t.Parallel()
	f := newTaskFixture(t, nil)
	init := lreq(1, "initialize", map[string]any{"protocolVersion": core.ProtocolVersion20251125,
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}, "", "").do(t, f.srv)
	sid := init.Header.Get(core.HeaderSessionID)
	lreq(nil, "notifications/initialized", nil, core.ProtocolVersion20251125, sid).do(t, f.srv)
	res := lreq(2, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"say": "old"}, "task": map[string]any{"ttl": 1}},
		core.ProtocolVersion20251125, sid).do(t, f.srv).result(t)
	if has(res, "taskId") || !strings.HasPrefix(textOf(res), "done old") {
		t.Fatalf("legacy call of a task tool = %v", res)
	}
	lreq(3, "tasks/get", map[string]any{"taskId": "x"}, core.ProtocolVersion20251125, sid).do(t, f.srv).
		wantError(t, http.StatusOK, core.CodeMethodNotFound)
}

func TestTaskInputRoundsPartialUpdate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		id := f.create(t, "ask", nil)
		res := f.await(t, id, "input_required")
		if got := keys(res["inputRequests"]); len(got) != 2 || got[0] != "a" || got[1] != "b" {
			t.Fatalf("inputRequests = %v", res["inputRequests"])
		}
		if at(res, "inputRequests", "a", "method") != "elicitation/create" {
			t.Fatalf("inputRequests.a = %v", at(res, "inputRequests", "a"))
		}
		ack := func(answers map[string]any) {
			t.Helper()
			a := taskReq(3, "tasks/update", id, map[string]any{"inputResponses": answers}).do(t, f.srv).result(t)
			if a["resultType"] != "complete" || has(a, "taskId") || has(a, "status") {
				t.Fatalf("tasks/update ack = %v", a)
			}
		}
		// A partial answer (and an unknown key) keeps it input_required with
		// only the unanswered key.
		ack(map[string]any{"a": map[string]any{"action": "accept", "content": map[string]any{"v": "x"}}, "zz": map[string]any{}})
		res = f.get(t, id)
		if res["status"] != "input_required" || strings.Join(keys(res["inputRequests"]), ",") != "b" {
			t.Fatalf("after a partial update: %v", res)
		}
		// Answering "a" again is ignored: the key is no longer outstanding.
		ack(map[string]any{"a": map[string]any{"action": "accept", "content": map[string]any{"v": "IGNORED"}}})
		ack(map[string]any{"b": map[string]any{"action": "accept", "content": map[string]any{"v": "y"}}})
		res = f.await(t, id, "completed")
		if got := textOf(res["result"].(map[string]any)); got != "xy" {
			t.Fatalf("result = %q, want xy (the handler ran again with both answers and its state)", got)
		}
		if n := f.calls.Load(); n != 2 {
			t.Fatalf("handler ran %d times, want 2", n)
		}
	})
}

func TestTaskCancelReachesHandler(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		id := f.create(t, "job", map[string]any{"wait": true})
		ctx := <-f.started
		ack := taskReq(1, "tasks/cancel", id, nil).do(t, f.srv).result(t)
		if ack["resultType"] != "complete" || has(ack, "taskId") {
			t.Fatalf("cancel ack = %v", ack)
		}
		<-ctx.Done()
		res := f.await(t, id, "cancelled")
		if has(res, "result") || has(res, "error") {
			t.Fatalf("cancelled task = %v", res)
		}
		// Idempotent on a terminal task.
		if a := taskReq(2, "tasks/cancel", id, nil).do(t, f.srv).result(t); a["resultType"] != "complete" {
			t.Fatalf("second cancel = %v", a)
		}
	})
}

// Two instances share a store: a task created and running on A is polled
// and cancelled through B; the cancellation reaches A's handler through
// the store.
func TestTaskCancelAcrossInstances(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		o := func() *core.ServerOptions {
			return &core.ServerOptions{TaskStore: store, TaskPollInterval: 50 * time.Millisecond, Keys: core.StaticKeys{core.NewRandomKey("k")}}
		}
		a, b := newTaskFixture(t, o()), newTaskFixture(t, o())
		id := a.create(t, "job", map[string]any{"wait": true})
		ctx := <-a.started
		if res := b.get(t, id); res["status"] != "working" {
			t.Fatalf("B sees %v", res)
		}
		time.Sleep(100 * time.Millisecond) // two polls of A's run
		if res := b.get(t, id); res["statusMessage"] != "halfway" {
			t.Fatalf("statusMessage through B = %v, want the handler's progress message", res["statusMessage"])
		}
		taskReq(1, "tasks/cancel", id, nil).do(t, b.srv).result(t)
		<-ctx.Done() // A's handler sees B's cancellation
		b.await(t, id, "cancelled")
	})
}

func TestTaskOtherPrincipalIsUnknown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{Authenticator: subjectAuth{}})
		id := f.create(t, "job", map[string]any{}, "X-Subject", "alice")
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			for _, who := range []string{"bob", ""} {
				r := taskReq(1, m, id, nil)
				if who != "" {
					r = r.withHeader("X-Subject", who)
				}
				e := r.do(t, f.srv).wantError(t, http.StatusOK, core.CodeInvalidParams)
				if !strings.Contains(str(e["message"]), "not found") {
					t.Fatalf("%s by %q: %v", m, who, e)
				}
			}
		}
		f.await2(t, id, "X-Subject", "alice")
	})
}

func (f *taskFixture) await2(t *testing.T, id string, hdr ...string) {
	t.Helper()
	for range 1000 {
		if f.get(t, id, hdr...)["status"] == "completed" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("task never completed")
}

// A flood of task creations by one caller stops at the per-principal
// bound: the store holds exactly the bound, the rest are refused.
func TestTaskFloodHitsPrincipalBound(t *testing.T) {
	t.Parallel()
	store := &memory.TaskStore{}
	f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, Authenticator: subjectAuth{}, MaxTasksPerPrincipal: 5, MaxAnonymousTasks: 3})
	_, refused := floodTasks(t, f, 200, func(i int) *testReq {
		return callReq(i, "job", map[string]any{"say": "x"}).withCaps(taskCaps).withHeader("X-Subject", "flooder")
	}, limitRefusal(t, "too_many_tasks"))
	if refused != 195 || store.Len() != 5 {
		t.Fatalf("200 creations at bound 5: %d refused, %d stored; want 195 and 5", refused, store.Len())
	}
	// Other callers are not affected; anonymous callers share their own pool.
	f.create(t, "job", map[string]any{}, "X-Subject", "someone-else")
	for range 3 {
		f.create(t, "job", map[string]any{})
	}
	callReq(9, "job", map[string]any{}).withCaps(taskCaps).do(t, f.srv).wantError(t, http.StatusTooManyRequests, core.CodeLimitExceeded)
}

// Polling tasks/get, however fast, runs nothing: the handler ran once.
func TestTaskPollingRunsNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{TaskPollInterval: time.Second})
		id := f.create(t, "job", map[string]any{"wait": true})
		<-f.started
		for range 500 { // 500 polls within one poll interval
			if f.get(t, id)["status"] != "working" {
				t.Fatal("status changed")
			}
		}
		close(f.release)
		f.await(t, id, "completed")
		for range 100 {
			f.get(t, id)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times for 600 polls, want 1", n)
		}
	})
}

// neverRunner accepts every task and runs none: a runner that died.
type neverRunner struct{ started atomic.Int32 }

func (r *neverRunner) Start(context.Context, string) error { r.started.Add(1); return nil }

// A task whose runner never ran is failed after the claim timeout, not
// working forever; an expired task is unknown.
func TestTaskLostRunnerFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		runner := &neverRunner{}
		f := newTaskFixture(t, &core.ServerOptions{TaskRunner: runner, TaskClaimTimeout: 10 * time.Second, TaskTTL: time.Minute})
		id := f.create(t, "job", map[string]any{})
		if f.get(t, id)["status"] != "working" || runner.started.Load() != 1 {
			t.Fatal("not handed to the runner")
		}
		time.Sleep(11 * time.Second)
		res := f.get(t, id)
		if res["status"] != "failed" || num(t, at(res, "error", "code")) != core.CodeInternalError {
			t.Fatalf("after the lease: %v, want failed with -32603", res)
		}
		time.Sleep(time.Minute)
		taskReq(1, "tasks/get", id, nil).do(t, f.srv).wantError(t, http.StatusOK, core.CodeInvalidParams)
	})
}

// A run that holds the task renews its lease: a long task is not failed
// while its runner lives; RunTask of a held or finished task runs nothing.
func TestTaskLeaseRenewedWhileRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{TaskLease: 3 * time.Second, TaskPollInterval: 100 * time.Millisecond})
		id := f.create(t, "job", map[string]any{"wait": true})
		<-f.started
		time.Sleep(20 * time.Second)
		if res := f.get(t, id); res["status"] != "working" {
			t.Fatalf("a live run's task after 20s of 3s leases: %v", res)
		}
		if err := f.srv.RunTask(context.Background(), id); err != nil {
			t.Fatalf("RunTask of a held task: %v", err)
		}
		close(f.release)
		f.await(t, id, "completed")
		if err := f.srv.RunTask(context.Background(), id); err != nil {
			t.Fatalf("RunTask of a finished task: %v", err)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
		if err := f.srv.RunTask(context.Background(), "unknown"); !errors.Is(err, core.ErrTaskNotFound) {
			t.Fatalf("RunTask(unknown) = %v, want ErrTaskNotFound", err)
		}
	})
}

// A result above MaxTaskResultBytes fails the task with a clear error.
func TestTaskResultTooLarge(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{MaxTaskResultBytes: 64})
		res := f.await(t, f.create(t, "job", map[string]any{"say": strings.Repeat("x", 100)}), "failed")
		if at(res, "error", "data", "reason") != "task_result_too_large" {
			t.Fatalf("oversized result: %v", res)
		}
	})
}

// The MRTR phase of a DeferTask tool runs in the request: input_required
// with requestState and no taskId, then a CreateTaskResult without
// requestState whose task sees the answer.
func TestTaskDeferredAfterInput(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		core.AddTool(f.srv, &core.Tool{Name: "deferred"},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				v, ok := req.Input.Elicitation("who")
				if !ok {
					return "", core.InputRequired(core.InputRequests{"who": core.ElicitForm("Who?", json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`))}, "")
				}
				if err := req.StartTask(); err != nil {
					return "", err
				}
				return "hello " + v.Content["n"].(string) + " " + req.TaskID()[:3], nil
			}, &core.ToolOptions{TaskSupport: core.TaskRequired, DeferTask: true})
		r1 := callReq(1, "deferred", nil).withCaps(taskCaps).do(t, f.srv).result(t)
		if r1["resultType"] != "input_required" || has(r1, "taskId") || !has(r1, "requestState") {
			t.Fatalf("round 1 = %v", r1)
		}
		r2 := callReq(2, "deferred", nil).withCaps(taskCaps).
			withParam("inputResponses", map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"n": "Ann"}}}).
			withParam("requestState", r1["requestState"]).do(t, f.srv).result(t)
		if r2["resultType"] != "task" || has(r2, "requestState") {
			t.Fatalf("round 2 = %v", r2)
		}
		id := str(r2["taskId"])
		res := f.await(t, id, "completed")
		if got := textOf(res["result"].(map[string]any)); got != "hello Ann "+id[:3] {
			t.Fatalf("task result = %q", got)
		}
	})
}

// The in-process pool is bounded: tasks beyond the workers wait in a
// queue of 16 per worker; a call that finds the queue full is refused at
// once with CodeLimitExceeded (429, task_workers_busy), and leaves no
// task behind; the queued tasks run as workers free up.
func TestTaskWorkersBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskWorkers: 2, TaskWorkersPerPrincipal: 2})
		var ids []string
		for range 2 + 2*16 {
			ids = append(ids, f.create(t, "job", map[string]any{"wait": true}))
		}
		<-f.started
		<-f.started
		synctest.Wait()
		if len(f.started) != 0 {
			t.Fatalf("%d more runs started with both workers busy", len(f.started))
		}
		r := callReq(3, "job", map[string]any{}).withCaps(taskCaps).do(t, f.srv)
		e := r.wantError(t, http.StatusTooManyRequests, core.CodeLimitExceeded)
		if at(e, "data", "reason") != "task_workers_busy" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("refusal with a full queue = %v (Retry-After %q)", e, r.Header.Get("Retry-After"))
		}
		if n := store.Len(); n != len(ids) {
			t.Fatalf("the store holds %d tasks, want %d: a refused call leaves no task", n, len(ids))
		}
		close(f.release)
		done := make(chan struct{})
		go func() { // the queued runs report their start too
			for {
				select {
				case <-f.started:
				case <-done:
					return
				}
			}
		}()
		for _, id := range ids {
			f.await(t, id, "completed")
		}
		close(done)
	})
}

// subscriptions/listen with taskIds: the acknowledgement names the
// caller's tasks, and each change arrives as notifications/tasks with the
// DetailedTask; a non-declaring request is refused with -32021.
func TestTaskStatusNotifications(t *testing.T) {
	t.Parallel()
	f := newTaskFixture(t, &core.ServerOptions{StreamKeepAlive: -1, TaskPollInterval: 20 * time.Millisecond})
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	id := f.create(t, "job", map[string]any{"wait": true, "say": "n"})
	<-f.started
	listen := func(caps any) *testReq {
		return mreq("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id, "unknown"}}}).withCaps(caps)
	}
	listen(map[string]any{}).do(t, f.srv).wantError(t, http.StatusBadRequest, core.CodeMissingRequiredClientCapability)
	s := openStream(t, ts.URL, listen(taskCaps))
	ack := s.next(5 * time.Second)
	if got := toJSON(t, at(ack, "params", "notifications")); !jsonEq(t, got, []byte(`{"taskIds":["`+id+`"]}`)) {
		t.Fatalf("acknowledged %s, want only the caller's task", got)
	}
	close(f.release)
	for {
		n := s.next(5 * time.Second)
		if n["method"] != "notifications/tasks" || at(n, "params", "taskId") != id {
			t.Fatalf("notification %v", n)
		}
		if at(n, "params", "_meta", core.MetaSubscriptionID) != "L" {
			t.Fatalf("notification not tagged with the subscription: %v", n)
		}
		if at(n, "params", "status") == "completed" {
			if !strings.HasPrefix(textOf(at(n, "params", "result").(map[string]any)), "done n") {
				t.Fatalf("completed notification = %v", n)
			}
			return
		}
	}
}

// A task a run claimed and lost (its lease passed) is not run again by a
// later RunTask (a retried invocation): it fails, or is cancelled when the
// client asked for that.
func TestTaskLapsedClaimIsNotRerun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskRunner: &neverRunner{}, TaskLease: 10 * time.Second})
		ctx := context.Background()
		for _, cancel := range []bool{false, true} {
			id := f.create(t, "job", map[string]any{})
			rec, err := store.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			rec.Runner, rec.LeaseExpires, rec.CancelRequested = "dead-run", time.Now().Add(time.Second), cancel
			if err := store.Update(ctx, rec); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			if err := f.srv.RunTask(ctx, id); err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{false: "failed", true: "cancelled"}[cancel]
			if got := f.get(t, id)["status"]; got != want {
				t.Fatalf("lapsed claim (cancel requested %v): status %v, want %s", cancel, got, want)
			}
		}
		if n := f.calls.Load(); n != 0 {
			t.Fatalf("handler ran %d times, want 0", n)
		}
	})
}

// Close lets runs finish within TaskShutdownGrace, then cancels the rest,
// which end failed at once (not after their lease).
func TestTaskCloseGrace(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := &memory.TaskStore{}
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskShutdownGrace: 5 * time.Second})
		finishes := f.create(t, "job", map[string]any{"wait": true})
		<-f.started
		closed := make(chan struct{})
		go func() { f.srv.Close(); close(closed) }()
		time.Sleep(time.Second)
		close(f.release) // within the grace
		<-closed
		rec, _ := store.Get(context.Background(), finishes)
		if rec.Status != core.TaskCompleted {
			t.Fatalf("a run that finished within the grace: %s", rec.Status)
		}
		// Created after Close: refused.
		callReq(9, "job", map[string]any{}).withCaps(taskCaps).do(t, f.srv).wantError(t, http.StatusOK, core.CodeInternalError)

		g := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskShutdownGrace: time.Second})
		stuck := g.create(t, "job", map[string]any{"wait": true})
		<-g.started
		start := time.Now()
		g.srv.Close()
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Close took %v, want the 1s grace", d)
		}
		rec, _ = store.Get(context.Background(), stuck)
		if rec.Status != core.TaskFailed {
			t.Fatalf("a run cancelled by Close: %s, want failed", rec.Status)
		}
	})
}

// The store a server uses when ServerOptions.TaskStore is nil passes the
// suite every task store must pass.
func TestDefaultTaskStore(t *testing.T) {
	t.Parallel()
	storetest.RunTasks(t, func(t *testing.T) core.TaskStore {
		return core.TaskStoreOf(core.NewServer(core.Implementation{Name: "d", Version: "1"}, nil))
	}, 400<<10)
}

// Every message of the extension validates against its official schema
// (ext-tasks schema/draft): CreateTaskResult, GetTaskResult in each status,
// the update and cancel acknowledgements.
func TestTaskWireMatchesSchema(t *testing.T) {
	t.Parallel()
	const rev = "ext-tasks-draft"
	// The check can fail: a handle without its task is refused.
	if specErr(t, rev, "CreateTaskResult", []byte(`{"resultType":"task","status":"working"}`)) == nil {
		t.Fatal("the schema accepts a CreateTaskResult without taskId")
	}
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		getRaw := func(id string) json.RawMessage {
			return taskReq(2, "tasks/get", id, nil).do(t, f.srv).resultRaw(t)
		}
		create := callReq(1, "job", map[string]any{"wait": true}).withCaps(taskCaps).do(t, f.srv).resultRaw(t)
		validateSpec(t, rev, "CreateTaskResult", create)
		var c struct{ TaskID string }
		json.Unmarshal(create, &c)
		<-f.started
		validateSpec(t, rev, "GetTaskResult", getRaw(c.TaskID)) // working
		validateSpec(t, rev, "CancelTaskResult", taskReq(3, "tasks/cancel", c.TaskID, nil).do(t, f.srv).resultRaw(t))
		f.await(t, c.TaskID, "cancelled")
		validateSpec(t, rev, "GetTaskResult", getRaw(c.TaskID))

		ask := f.create(t, "ask", nil)
		f.await(t, ask, "input_required")
		validateSpec(t, rev, "GetTaskResult", getRaw(ask))
		validateSpec(t, rev, "UpdateTaskResult", taskReq(4, "tasks/update", ask, map[string]any{"inputResponses": map[string]any{
			"a": map[string]any{"action": "accept", "content": map[string]any{"v": "1"}},
			"b": map[string]any{"action": "accept", "content": map[string]any{"v": "2"}},
		}}).do(t, f.srv).resultRaw(t))
		f.await(t, ask, "completed")
		validateSpec(t, rev, "GetTaskResult", getRaw(ask))

		failed := f.create(t, "job", map[string]any{"say": "rpc-error"})
		f.await(t, failed, "failed")
		validateSpec(t, rev, "GetTaskResult", getRaw(failed))
	})
}

// Inside a task, as in a request, the handler's ClientCapabilities is its
// own copy: changing it does not make the server ask the client for what
// the client never declared.
func TestTaskHandlerCannotWidenCapabilities(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		core.AddTool(f.srv, &core.Tool{Name: "widen"},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				req.ClientCapabilities.Elicitation = &core.ElicitationCapabilities{}
				return "", core.InputRequired(core.InputRequests{"q": core.ElicitForm("?", json.RawMessage(`{"type":"object","properties":{}}`))}, "")
			}, &core.ToolOptions{TaskSupport: core.TaskOptional})
		r := callReq(1, "widen", nil).withCaps(map[string]any{"extensions": map[string]any{core.ExtensionTasks: map[string]any{}}}).do(t, f.srv).result(t)
		res := f.await(t, str(r["taskId"]), "failed")
		if num(t, at(res, "error", "code")) != core.CodeMissingRequiredClientCapability {
			t.Fatalf("a handler that widened its capabilities: %v, want failed with -32021", res)
		}
	})
}

// A result without content blocks is inlined with "content": [], never
// null: the inlined result is a valid CallToolResult.
func TestTaskEmptyResultContent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, nil)
		core.AddTool(f.srv, &core.Tool{Name: "empty"},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (*core.CallToolResult, error) {
				return &core.CallToolResult{}, nil
			}, &core.ToolOptions{TaskSupport: core.TaskOptional})
		res := f.await(t, f.create(t, "empty", nil), "completed")
		inlined, _ := json.Marshal(res["result"])
		validateSpec(t, modernVersion, "CallToolResult", inlined)
	})
}
