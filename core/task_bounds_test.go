package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

// faultyTaskStore wraps a TaskStore: it counts the calls that reach it and
// fails them while down is set (as a store behind a cut network does).
type faultyTaskStore struct {
	inner core.TaskStore

	gets, creates, updates atomic.Int64
	down                   atomic.Bool
	// hang, when set, makes calls wait unanswered until their context
	// ends (as a network that drops packets does).
	hang atomic.Bool
	// failUpdate, when set, decides whether an Update that reaches the
	// store fails (before it is applied).
	mu         sync.Mutex
	failUpdate func(*core.TaskRecord) error
}

var errStoreDown = errors.New("task store unreachable")

// fault is the failure of a call while the store is down or hangs.
func (s *faultyTaskStore) fault(ctx context.Context) error {
	if s.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.down.Load() {
		return errStoreDown
	}
	return nil
}

func newFaultyTaskStore() *faultyTaskStore { return &faultyTaskStore{inner: &memory.TaskStore{}} }

func (s *faultyTaskStore) Create(ctx context.Context, rec *core.TaskRecord, limits core.TaskLimits) error {
	s.creates.Add(1)
	if err := s.fault(ctx); err != nil {
		return err
	}
	return s.inner.Create(ctx, rec, limits)
}

func (s *faultyTaskStore) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	s.gets.Add(1)
	if err := s.fault(ctx); err != nil {
		return nil, err
	}
	return s.inner.Get(ctx, id)
}

func (s *faultyTaskStore) Update(ctx context.Context, rec *core.TaskRecord) error {
	s.updates.Add(1)
	if err := s.fault(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	f := s.failUpdate
	s.mu.Unlock()
	if f != nil {
		if err := f(rec); err != nil {
			return err
		}
	}
	return s.inner.Update(ctx, rec)
}

func (s *faultyTaskStore) calls() int64 { return s.gets.Load() + s.creates.Load() + s.updates.Load() }

// Task ids that core cannot have issued (too long, or outside the
// base64url alphabet) are answered as unknown ids at the door: -32602,
// no store call, no ERROR log. A 3,000-byte id used to reach DynamoDB,
// whose key limit turned it into -32603 "task store unavailable".
func TestTaskIDValidatedAtTheDoor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		var logs mcptest.LogBuffer
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		good := f.create(t, "job", map[string]any{})
		f.await(t, good, "completed")
		for name, id := range map[string]string{
			"3000 bytes":                       strings.Repeat("A", 3000),
			"129 bytes":                        strings.Repeat("a", 129),
			"a space":                          "abc def",
			"a slash":                          "abc/def",
			"a plus":                           "abc+def",
			"non-ASCII":                        "abcé",
			"a NUL":                            "abc\x00",
			"a dot":                            "../x",
			"empty":                            "",
			"a valid one's prefix and a quote": good[:10] + `"`,
		} {
			before := store.calls()
			for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
				r := taskReq(1, m, id, nil)
				if id == "" || strings.ContainsAny(id, "\x00é") {
					r = r.withHeader(core.HeaderName, "x") // not a valid header value: the body decides
				}
				e := r.do(t, f.srv).rpcError(t)
				if num(t, e["code"]) != core.CodeInvalidParams && num(t, e["code"]) != core.CodeHeaderMismatch {
					t.Errorf("%s with an id of %s: %v, want -32602", m, name, e)
				}
			}
			if n := store.calls() - before; n != 0 {
				t.Errorf("an id of %s reached the store %d times", name, n)
			}
		}
		// The runners' entry point (a Lambda task event names an id) is
		// guarded the same way.
		before := store.calls()
		if err := f.srv.RunTask(t.Context(), strings.Repeat("A", 3000)); !errors.Is(err, core.ErrTaskNotFound) {
			t.Errorf("RunTask of a 3000-byte id: %v, want ErrTaskNotFound", err)
		}
		if n := store.calls() - before; n != 0 {
			t.Errorf("RunTask of a 3000-byte id reached the store %d times", n)
		}
		if strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("invalid ids were logged as errors:\n%s", logs.String())
		}
	})
}

// A task no run has claimed waits for its runner until TaskClaimTimeout,
// not TaskLease: an asynchronous invocation that the platform holds back
// (Lambda under throttling) longer than a lease must still find its task.
// Past the claim timeout the task fails as never started, and a runner
// that comes later does not run it.
func TestTaskUnclaimedWaitsForItsRunner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		runner := &neverRunner{}
		f := newTaskFixture(t, &core.ServerOptions{TaskRunner: runner, TaskLease: 2 * time.Second, TaskClaimTimeout: time.Minute})
		id := f.create(t, "job", map[string]any{})
		time.Sleep(30 * time.Second) // fifteen leases
		if res := f.get(t, id); res["status"] != "working" {
			t.Fatalf("an unclaimed task 30 s after its creation (lease 2 s, claim timeout 1 min): %v, want working", res)
		}
		// The runner comes late, but within the claim timeout: the task runs.
		if err := f.srv.RunTask(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if res := f.get(t, id); res["status"] != "completed" {
			t.Fatalf("after a run within the claim timeout: %v", res)
		}

		late := f.create(t, "job", map[string]any{})
		time.Sleep(time.Minute + time.Second)
		res := f.get(t, late)
		if res["status"] != "failed" || !strings.Contains(str(at(res, "error", "message")), "no runner took the task") {
			t.Fatalf("an unclaimed task past the claim timeout: %v, want failed saying no runner took it", res)
		}
		if err := f.srv.RunTask(t.Context(), late); err != nil {
			t.Fatal(err)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("the handler ran %d times, want 1 (a runner past the claim deadline runs nothing)", n)
		}
	})
}

// A runner that arrives after the claim deadline, before any reader,
// fails the task rather than running it.
func TestTaskLateRunnerFailsUnclaimedTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{TaskRunner: &neverRunner{}, TaskClaimTimeout: time.Minute})
		id := f.create(t, "job", map[string]any{})
		time.Sleep(2 * time.Minute)
		if err := f.srv.RunTask(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if n := f.calls.Load(); n != 0 {
			t.Fatalf("the handler ran %d times past the claim deadline", n)
		}
		if res := f.get(t, id); res["status"] != "failed" {
			t.Fatalf("after a late runner: %v, want failed", res)
		}
	})
}

// One principal cannot take every worker: with the default pool (64
// workers, a quarter each), alice's 64 long tasks hold 16 workers and
// queue the rest, and bob's task starts at once. Freed workers go to the
// waiting principals in turn, and every queued task runs in the end.
func TestTaskWorkersSharedFairly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := core.NewServer(core.Implementation{Name: "t", Version: "1"},
			&core.ServerOptions{Authenticator: subjectAuth{}, Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { srv.Close() })
		started := make(chan string, 256)
		release := make(chan struct{})
		core.AddTool(srv, &core.Tool{Name: "long"},
			func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
				started <- req.Principal.Subject
				select {
				case <-release:
				case <-ctx.Done():
				}
				return "done", nil
			}, &core.ToolOptions{TaskSupport: core.TaskOptional})
		create := func(who string) string {
			res := callReq(1, "long", map[string]any{}).withCaps(taskCaps).withHeader("X-Subject", who).do(t, srv).result(t)
			if res["resultType"] != "task" {
				t.Fatalf("tools/call by %s: %v", who, res)
			}
			return str(res["taskId"])
		}
		var ids []string
		for range 64 {
			ids = append(ids, create("alice"))
		}
		synctest.Wait()
		if n := len(started); n != 16 {
			t.Fatalf("alice's 64 tasks started %d runs, want 16 (a quarter of the 64 workers)", n)
		}
		for range 16 {
			<-started
		}
		ids = append(ids, create("bob"))
		synctest.Wait()
		select {
		case who := <-started:
			if who != "bob" {
				t.Fatalf("the next run started is %s's, want bob's", who)
			}
		default:
			t.Fatal("bob's task did not start while alice holds her share of the workers")
		}
		close(release)
		go func() {
			for range started { // the queued runs report their start too
			}
		}()
		for _, id := range ids {
			for i := 0; ; i++ {
				res := taskReq(2, "tasks/get", id, nil).withHeader("X-Subject", subjectOf(ids, id)).do(t, srv).result(t)
				if res["status"] == "completed" {
					break
				}
				if i == 1000 {
					t.Fatalf("task %s: %v", id, res)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		close(started)
	})
}

// subjectOf is the subject that created ids[i] in TestTaskWorkersSharedFairly:
// the last id is bob's.
func subjectOf(ids []string, id string) string {
	if id == ids[len(ids)-1] {
		return "bob"
	}
	return "alice"
}

// A store outage of six seconds around the moment the handler returns
// loses nothing: the run tries again to store the result, with growing
// pauses, within its lease, and the task completes once the store is back;
// the handler ran once, and the run's log record says "completed" only
// once the result is stored. (A single failed write used to leave the
// task working until its lease passed, then "runner stopped": a client
// would call again and repeat the tool's effects.)
func TestTaskResultSurvivesStoreOutage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		var logs mcptest.LogBuffer
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		id := f.create(t, "job", map[string]any{"wait": true, "say": "kept"})
		<-f.started
		store.down.Store(true)
		before := store.calls()
		close(f.release) // the handler returns while the store is down
		time.Sleep(6 * time.Second)
		synctest.Wait()
		if strings.Contains(logs.String(), "status=completed") {
			t.Fatalf("the run logged completed before the outcome was stored:\n%s", logs.String())
		}
		tried := store.calls() - before
		store.down.Store(false)
		res := f.await(t, id, "completed")
		if got := textOf(res["result"].(map[string]any)); !strings.Contains(got, "done kept") {
			t.Fatalf("result after the outage = %q", got)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("the handler ran %d times, want 1", n)
		}
		if tried < 3 || tried > 40 {
			t.Fatalf("%d store calls during a 6 s outage: want a few retries with growing pauses", tried)
		}
		if !strings.Contains(logs.String(), "msg=\"mcp task run\"") || !strings.Contains(logs.String(), "status=completed") {
			t.Fatalf("no run record after the outcome was stored:\n%s", logs.String())
		}
	})
}

// An outage longer than the run's lease ends the retries: the run gives
// up, says so at ERROR, and the task fails as any task whose runner
// stopped (a reader finds the lease passed) once the store is back.
func TestTaskResultGivenUpAfterLease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		var logs mcptest.LogBuffer
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskLease: 3 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		id := f.create(t, "job", map[string]any{"wait": true})
		<-f.started
		store.down.Store(true)
		close(f.release)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if !strings.Contains(logs.String(), "the outcome could not be stored") || strings.Contains(logs.String(), "status=completed") {
			t.Fatalf("logs after an outage longer than the lease:\n%s", logs.String())
		}
		tried := store.calls()
		time.Sleep(time.Minute)
		if n := store.calls(); n != tried {
			t.Fatalf("the run kept calling the store after it gave up: %d calls, then %d", tried, n)
		}
		store.down.Store(false)
		res := f.await(t, id, "failed")
		if !strings.Contains(str(at(res, "error", "message")), "runner stopped") {
			t.Fatalf("task after the outage: %v", res)
		}
	})
}

// A status message of any size neither kills the running task nor grows
// its record past the store's limit: it is cut to a bound, and a message
// that still does not fit beside what the record holds is dropped while
// the lease goes on being renewed. (A 500 KB progress message used to
// make every lease renewal fail, and the running task was failed as
// "runner stopped".)
func TestTaskHugeStatusMessageKeepsTaskAlive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := core.NewServer(core.Implementation{Name: "t", Version: "1"},
			&core.ServerOptions{TaskLease: 3 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { srv.Close() })
		core.AddTool(srv, &core.Tool{Name: "chatty"},
			func(ctx context.Context, req *core.CallToolRequest, in struct {
				Pad string `json:"pad"`
			}) (string, error) {
				req.NotifyProgress(ctx, 1, 2, strings.Repeat("é", 250_000)) // 500 KB
				time.Sleep(20 * time.Second)                                // many leases
				return "still here", nil
			}, &core.ToolOptions{TaskSupport: core.TaskOptional})
		for _, pad := range []int{0, 390_000} { // and beside arguments that fill the record
			res := callReq(1, "chatty", map[string]any{"pad": strings.Repeat("x", pad)}).withCaps(taskCaps).do(t, srv).result(t)
			id := str(res["taskId"])
			time.Sleep(10 * time.Second)
			got := taskReq(2, "tasks/get", id, nil).do(t, srv).result(t)
			if got["status"] != "working" {
				t.Fatalf("pad %d: after a 500 KB status message and three leases: %v, want working", pad, got["status"])
			}
			if msg := str(got["statusMessage"]); len(msg) > 2048 || !utf8.ValidString(msg) {
				t.Fatalf("pad %d: statusMessage of %d bytes (valid UTF-8: %v), want at most 2048", pad, len(msg), utf8.ValidString(msg))
			}
			time.Sleep(15 * time.Second)
			got = taskReq(3, "tasks/get", id, nil).do(t, srv).result(t)
			if got["status"] != "completed" || textOf(got["result"].(map[string]any)) != "still here" {
				t.Fatalf("pad %d: %v, want completed", pad, got)
			}
		}
	})
}

// Tokens that name neither a client nor a subject cannot own tasks: every
// such token of an issuer would be one owner, reading and cancelling the
// others' tasks and sharing one bound. A call of an optional task tool
// runs synchronously, a call of a required one is refused (403, as
// initialize is refused when sessions are required), and tasks/* find
// nothing.
func TestTaskNeedsAnOwner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{Authenticator: issuerOnlyAuth{}})
		res := callReq(1, "job", map[string]any{"say": "sync"}).withCaps(taskCaps).withHeader("X-Issuer-Only", "1").do(t, f.srv).result(t)
		if res["resultType"] != "complete" || !strings.Contains(textOf(res), "done sync in request") {
			t.Fatalf("an optional task tool called with an issuer-only token: %v, want a synchronous result", res)
		}
		e := callReq(2, "must_task", map[string]any{}).withCaps(taskCaps).withHeader("X-Issuer-Only", "1").do(t, f.srv).
			wantError(t, http.StatusForbidden, core.CodeInvalidRequest)
		if !strings.Contains(str(e["message"]), "no client or subject") {
			t.Fatalf("refusal = %v", e)
		}
		// A task of an owner is not visible to an issuer-only caller.
		id := f.create(t, "job", map[string]any{}, "X-Subject", "alice")
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			taskReq(3, m, id, nil).withHeader("X-Issuer-Only", "1").do(t, f.srv).wantError(t, http.StatusOK, core.CodeInvalidParams)
		}
	})
}

// issuerOnlyAuth is subjectAuth, and with X-Issuer-Only a principal of the
// issuer alone (a token with neither sub nor client_id).
type issuerOnlyAuth struct{ subjectAuth }

func (a issuerOnlyAuth) Authenticate(r *http.Request) (context.Context, error) {
	if r.Header.Get("X-Issuer-Only") != "" {
		return core.NewContextWithPrincipal(r.Context(), &core.Principal{Issuer: "https://issuer.test"}), nil
	}
	return a.subjectAuth.Authenticate(r)
}

// floodTasks makes the task call req(i) for each i below n and counts the
// calls stored and those refused; check fails the test on a refusal that
// is not the one expected.
func floodTasks(t *testing.T, f *taskFixture, n int, req func(i int) *testReq, check func(r *resp, e map[string]any)) (stored, refused int) {
	t.Helper()
	for i := range n {
		r := req(i).do(t, f.srv)
		if e, ok := r.final(t)["error"].(map[string]any); ok {
			check(r, e)
			refused++
			continue
		}
		stored++
	}
	return stored, refused
}

// limitRefusal is a check for floodTasks: a refusal is HTTP 429 with
// CodeLimitExceeded, reason and a Retry-After.
func limitRefusal(t *testing.T, reason string) func(*resp, map[string]any) {
	return func(r *resp, e map[string]any) {
		t.Helper()
		if r.Status != http.StatusTooManyRequests || num(t, e["code"]) != core.CodeLimitExceeded ||
			at(e, "data", "reason") != reason || r.Header.Get("Retry-After") == "" {
			t.Fatalf("refusal = HTTP %d %v", r.Status, e)
		}
	}
}

// A flood of anonymous task calls with large arguments stops at the bytes
// bound, not only at the count: the in-memory store holds at most
// MaxAnonymousTaskBytes of their arguments, later calls are refused with
// CodeLimitExceeded (429, reason too_many_task_bytes, a Retry-After), and
// authenticated callers keep their own bounds. A single call larger than
// the whole bound is -32602, since no wait makes room for it.
func TestTaskBytesBoundAnonymousFlood(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{Authenticator: subjectAuth{}, MaxAnonymousTaskBytes: 3 << 20})
		big := strings.Repeat("x", 380<<10)
		stored, refused := floodTasks(t, f, 40, func(i int) *testReq {
			return callReq(i, "job", map[string]any{"say": big}).withCaps(taskCaps)
		}, limitRefusal(t, "too_many_task_bytes"))
		if want := (3 << 20) / (380<<10 + 40); stored != want || refused != 40-want {
			t.Fatalf("40 calls of 380 KiB at a bound of 3 MiB: %d stored, %d refused; want %d stored", stored, refused, want)
		}
		if n := core.LocalTaskBytes(f.srv); n > 4<<20 {
			t.Fatalf("the store holds %d bytes after the flood, want about the 3 MiB bound", n)
		}
		f.create(t, "job", map[string]any{"say": big}, "X-Subject", "alice") // her own bound
		e := callReq(99, "job", map[string]any{"say": strings.Repeat("y", 3<<20+1000)}).withCaps(taskCaps).do(t, f.srv).rpcError(t)
		if num(t, e["code"]) != core.CodeInvalidParams {
			t.Fatalf("a call larger than the whole bound: %v, want -32602", e)
		}
	})
}

// The default in-memory store bounds the bytes of the whole process
// (MaxLocalTaskStoreBytes), whoever the callers: many principals within
// their own bounds cannot grow it past it.
func TestTaskLocalStoreBytesBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newTaskFixture(t, &core.ServerOptions{Authenticator: subjectAuth{}, MaxLocalTaskStoreBytes: 2 << 20})
		arg := strings.Repeat("x", 100<<10)
		stored, full := floodTasks(t, f, 40, func(i int) *testReq {
			return callReq(i, "job", map[string]any{"say": arg}).withCaps(taskCaps).withHeader("X-Subject", "user"+strconv.Itoa(i))
		}, func(_ *resp, e map[string]any) {
			if num(t, e["code"]) != core.CodeLimitExceeded || at(e, "data", "reason") != "task_store_full" {
				t.Fatalf("refusal = %v", e)
			}
		})
		if full == 0 {
			t.Fatal("40 principals of 100 KiB each filled a 2 MiB store without a refusal")
		}
		// Outcomes are never refused: past the bound, the store holds at
		// most what the stored tasks' results add (each echoes its 100
		// KiB argument).
		if n := core.LocalTaskBytes(f.srv); n > 2<<20+int64(stored)*(101<<10) {
			t.Fatalf("the store holds %d bytes with %d tasks, bound 2 MiB plus their results", n, stored)
		}
	})
}

// A store outage when a run starts does not strand the task: the claim is
// tried again with growing pauses (for up to a lease), and the task runs
// once the store is back. A failed claim used to end the run at once,
// leaving the task unclaimed until no runner could take it.
func TestTaskClaimSurvivesStoreOutage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store, TaskRunner: &neverRunner{}})
		id := f.create(t, "job", map[string]any{"say": "late"})
		store.down.Store(true)
		done := make(chan error, 1)
		go func() { done <- f.srv.RunTask(context.Background(), id) }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("RunTask returned during the outage: %v", err)
		default:
		}
		store.down.Store(false)
		if err := <-done; err != nil {
			t.Fatalf("RunTask after the outage: %v", err)
		}
		if res := f.get(t, id); res["status"] != "completed" || f.calls.Load() != 1 {
			t.Fatalf("after the outage: %v, %d runs", res, f.calls.Load())
		}
	})
}

// LimitExceededError is the answer to a bound: -31429 with reason, limit
// and retryAfterMs, and HTTP 429 with Retry-After in whole seconds, at
// least 1.
func TestLimitExceededError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait  time.Duration
		after string
		ms    float64
	}{{0, "1", 1000}, {1500 * time.Millisecond, "2", 1500}, {time.Hour, "3600", 3600000}} {
		e := core.LimitExceededError("too_many_widgets", 7, tc.wait, "Too many widgets: %d", 7)
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if e.Code != core.CodeLimitExceeded || e.Message != "Too many widgets: 7" || e.HTTPStatus() != http.StatusTooManyRequests ||
			e.HTTPHeader().Get("Retry-After") != tc.after || data["reason"] != "too_many_widgets" || data["limit"] != float64(7) || data["retryAfterMs"] != tc.ms {
			t.Errorf("LimitExceededError(wait %v) = %+v, data %v, Retry-After %q", tc.wait, e, data, e.HTTPHeader().Get("Retry-After"))
		}
	}
}

// A store that never answers (calls that hang until their context ends)
// does not hold a run for ever: each attempt of the run's store work is
// bounded (a third of the lease, at most 10 s), fails, and is tried again;
// once the store answers again the task completes with its result. Without
// the bound a heartbeat's read waited for ever, and the run with it.
func TestTaskRunSurvivesHangingStore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		f := newTaskFixture(t, &core.ServerOptions{TaskStore: store})
		id := f.create(t, "job", map[string]any{"wait": true, "say": "patient"})
		<-f.started
		store.hang.Store(true)
		close(f.release) // the handler returns while every call hangs
		time.Sleep(6 * time.Second)
		store.hang.Store(false)
		res := f.await(t, id, "completed")
		if got := textOf(res["result"].(map[string]any)); !strings.Contains(got, "done patient") || f.calls.Load() != 1 {
			t.Fatalf("after the store hung: %q, %d runs", got, f.calls.Load())
		}
	})
}
