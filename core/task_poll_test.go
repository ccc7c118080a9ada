package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// The listen streams of an instance share one read per watched task per
// poll interval (task_notify.go). The tests run in synctest bubbles served
// in this process (handlerClient): poll intervals pass on the bubble's
// clock, and synctest.Wait lets every stream and the poller finish what a
// tick started before the store's counters are read.

const streamURL = "http://streams.test/mcp"

// streamFixture is a server whose task tool "hold" makes tasks that stay
// working (its runner never runs them: tasks/cancel ends them at once),
// over a task store that counts its calls.
type streamFixture struct {
	srv   *core.Server
	store *faultyTaskStore
	hc    *http.Client
}

func newStreamFixture(t *testing.T, o *core.ServerOptions) *streamFixture {
	t.Helper()
	f := &streamFixture{store: newFaultyTaskStore()}
	o.TaskStore, o.TaskRunner = f.store, &neverRunner{}
	o.Authenticator = subjectAuth{}
	o.StreamKeepAlive = -1
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	f.srv = core.NewServer(core.Implementation{Name: "streams", Version: "1"}, o)
	t.Cleanup(func() { f.srv.Close() })
	core.AddTool(f.srv, &core.Tool{Name: "hold"},
		func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "held", nil }, &core.ToolOptions{TaskSupport: core.TaskOptional})
	f.hc = handlerClient(f.srv)
	return f
}

// as sets the caller of r (X-Subject; "" is anonymous).
func as(r *testReq, subject string) *testReq {
	if subject == "" {
		return r
	}
	return r.withHeader("X-Subject", subject)
}

// tasks creates n tasks of subject and returns their ids.
func (f *streamFixture) tasks(t *testing.T, subject string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		res := as(callReq(1, "hold", map[string]any{}).withCaps(taskCaps), subject).do(t, f.srv).result(t)
		if res["resultType"] != "task" {
			t.Fatalf("tools/call: %v, want a task", res)
		}
		ids[i] = str(res["taskId"])
	}
	return ids
}

// cancel cancels the task id of subject: it ends at once (no runner holds it).
func (f *streamFixture) cancel(t *testing.T, subject, id string) {
	t.Helper()
	if res := as(taskReq(1, "tasks/cancel", id, nil), subject).do(t, f.srv).result(t); res["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %v", res)
	}
}

// listenReq is a subscriptions/listen request of subject for notifications.
func listenReq(id any, subject string, notifications map[string]any) *testReq {
	return as(mreq(id, "subscriptions/listen", map[string]any{"notifications": notifications}).withCaps(taskCaps), subject)
}

// listen opens a listen stream and returns it with its acknowledged
// subscription.
func (f *streamFixture) listen(t *testing.T, id any, subject string, notifications map[string]any) (*sseStream, map[string]any) {
	t.Helper()
	s := openStreamVia(t, f.hc, streamURL, listenReq(id, subject, notifications))
	ack := s.next(time.Second)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %v, want the acknowledgement", ack)
	}
	return s, at(ack, "params", "notifications").(map[string]any)
}

// quiet fails unless s has no event waiting (call after synctest.Wait).
func quiet(t *testing.T, s *sseStream, what string) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		t.Fatalf("%s: unexpected event %s", what, ev)
	default:
	}
}

// taskNote reads the next event of s, which must be notifications/tasks,
// and returns its task id and status.
func taskNote(t *testing.T, s *sseStream) (id, status string) {
	t.Helper()
	n := s.next(time.Second)
	if n["method"] != "notifications/tasks" {
		t.Fatalf("got %v, want notifications/tasks", n)
	}
	return str(at(n, "params", "taskId")), str(at(n, "params", "status"))
}

// Ten listen streams of one caller watching the same 32 tasks cost 32 store
// reads per poll interval, not 320: the instance reads each watched task
// once per interval and fans the record out. Opening them costs the first
// stream's 32 ownership reads; the others find the tasks already watched.
// Each stream still gets each change once; terminal tasks are reported
// once and dropped, and with nothing left to watch the store is read no
// more while the streams stay open.
func TestListenStreamsShareTaskPolls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		f := newStreamFixture(t, &core.ServerOptions{TaskPollInterval: interval})
		ids := f.tasks(t, "alice", 32)
		sorted := append([]string(nil), ids...)
		sort.Strings(sorted)

		before := f.store.gets.Load()
		var streams []*sseStream
		for i := range 10 {
			s, got := f.listen(t, i, "alice", map[string]any{"taskIds": ids})
			if fmt.Sprint(got["taskIds"]) != fmt.Sprint(sorted) {
				t.Fatalf("stream %d acknowledged %v, want the 32 tasks", i, got["taskIds"])
			}
			streams = append(streams, s)
		}
		synctest.Wait()
		if n := f.store.gets.Load() - before; n > 32 {
			t.Errorf("opening 10 streams on the same 32 tasks read the store %d times, want at most 32", n)
		}
		for tick := range 5 {
			base := f.store.gets.Load()
			time.Sleep(interval)
			synctest.Wait()
			if n := f.store.gets.Load() - base; n != 32 {
				t.Fatalf("poll interval %d: %d store reads for 10 streams watching 32 tasks, want 32", tick+1, n)
			}
		}
		for i, s := range streams {
			quiet(t, s, fmt.Sprintf("stream %d before any change", i))
		}

		// A change made through this instance reaches every stream at
		// once, once.
		f.cancel(t, "alice", ids[0])
		for i, s := range streams {
			if id, status := taskNote(t, s); id != ids[0] || status != "cancelled" {
				t.Fatalf("stream %d: %s %s, want %s cancelled", i, id, status, ids[0])
			}
		}
		synctest.Wait()
		for i, s := range streams {
			quiet(t, s, fmt.Sprintf("stream %d after the first change", i))
		}

		// The terminal task is dropped: 31 reads per interval.
		base := f.store.gets.Load()
		time.Sleep(interval)
		synctest.Wait()
		if n := f.store.gets.Load() - base; n != 31 {
			t.Fatalf("%d reads in the interval after one task ended, want 31", n)
		}

		// Every task ends: each stream gets 31 more notifications, then
		// the store is read no more, while the streams stay open.
		for _, id := range ids[1:] {
			f.cancel(t, "alice", id)
		}
		for i, s := range streams {
			seen := map[string]bool{}
			for range 31 {
				id, status := taskNote(t, s)
				if status != "cancelled" || seen[id] {
					t.Fatalf("stream %d: %s %s (seen before: %v)", i, id, status, seen[id])
				}
				seen[id] = true
			}
		}
		synctest.Wait()
		base = f.store.gets.Load()
		time.Sleep(10 * interval)
		synctest.Wait()
		if n := f.store.gets.Load() - base; n != 0 {
			t.Errorf("%d store reads in 10 intervals with no live task watched, want 0", n)
		}
		for i, s := range streams {
			quiet(t, s, fmt.Sprintf("stream %d after every task ended", i))
		}
	})
}

// A listen request naming many task ids costs at most 32 store reads
// (maxWatchedTasks): the ids beyond the first 32 distinct valid ones are
// not looked at, whatever the first turn out to be.
func TestListenWatchReadsBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFixture(t, &core.ServerOptions{})
		own := f.tasks(t, "alice", 1)[0]
		ids := make([]string, 0, 1001)
		for i := range 1000 {
			ids = append(ids, fmt.Sprintf("unknown-task-%04d", i))
		}
		ids = append(ids, own)
		before := f.store.gets.Load()
		_, got := f.listen(t, 1, "alice", map[string]any{"taskIds": ids})
		if n := f.store.gets.Load() - before; n > 32 {
			t.Errorf("a listen naming 1001 task ids read the store %d times, want at most 32", n)
		}
		if _, ok := got["taskIds"]; ok {
			t.Errorf("acknowledged %v: the caller's task came after 1000 others and is not looked at", got["taskIds"])
		}
	})
}

// Tasks are watched only by their owner, also when another caller's
// stream already watches them (the instance knows their owner without a
// read).
func TestListenWatchesOnlyOwnTasks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFixture(t, &core.ServerOptions{})
		ids := f.tasks(t, "alice", 2)
		alice, _ := f.listen(t, 1, "alice", map[string]any{"taskIds": ids})
		bob, got := f.listen(t, 2, "bob", map[string]any{"taskIds": ids, "toolsListChanged": true})
		if _, ok := got["taskIds"]; ok {
			t.Fatalf("bob's stream acknowledged alice's tasks: %v", got)
		}
		anon, got := f.listen(t, 3, "", map[string]any{"taskIds": ids, "toolsListChanged": true})
		if _, ok := got["taskIds"]; ok {
			t.Fatalf("an anonymous stream acknowledged alice's tasks: %v", got)
		}
		time.Sleep(time.Millisecond) // lastUpdatedAt moves on the bubble's clock
		f.cancel(t, "alice", ids[0])
		if id, _ := taskNote(t, alice); id != ids[0] {
			t.Fatalf("alice got %s, want %s", id, ids[0])
		}
		synctest.Wait()
		quiet(t, bob, "bob's stream")
		quiet(t, anon, "the anonymous stream")
	})
}

// A store that fails ends no stream: the poller skips the reads that
// failed, and the streams carry the changes once the store is back.
func TestListenSurvivesStoreErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		f := newStreamFixture(t, &core.ServerOptions{TaskPollInterval: interval})
		ids := f.tasks(t, "alice", 3)
		a, _ := f.listen(t, 1, "alice", map[string]any{"taskIds": ids})
		b, _ := f.listen(t, 2, "alice", map[string]any{"taskIds": ids[:1]})
		f.store.down.Store(true)
		time.Sleep(5 * interval)
		synctest.Wait()
		quiet(t, a, "stream a while the store is down")
		quiet(t, b, "stream b while the store is down")
		f.store.down.Store(false)
		f.cancel(t, "alice", ids[0])
		for _, s := range []*sseStream{a, b} {
			if id, status := taskNote(t, s); id != ids[0] || status != "cancelled" {
				t.Fatalf("after the outage: %s %s, want %s cancelled", id, status, ids[0])
			}
		}
	})
}

// The poll loop runs only while a live task is watched: it starts with the
// first watching stream and stops when the last one ends, and when every
// watched task has ended.
func TestTaskPollerStopsWhenIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		f := newStreamFixture(t, &core.ServerOptions{TaskPollInterval: interval})
		ids := f.tasks(t, "alice", 2)
		if core.TaskPollerRunning(f.srv) {
			t.Fatal("the poller runs before any stream watches")
		}
		a, _ := f.listen(t, 1, "alice", map[string]any{"taskIds": ids})
		b, _ := f.listen(t, 2, "alice", map[string]any{"taskIds": ids[:1]})
		if !core.TaskPollerRunning(f.srv) {
			t.Fatal("the poller does not run while streams watch")
		}
		a.close()
		synctest.Wait()
		if !core.TaskPollerRunning(f.srv) {
			t.Fatal("the poller stopped while a stream still watches")
		}
		b.close()
		synctest.Wait()
		if core.TaskPollerRunning(f.srv) {
			t.Fatal("the poller runs after the last stream ended")
		}
		base := f.store.gets.Load()
		time.Sleep(5 * interval)
		synctest.Wait()
		if n := f.store.gets.Load() - base; n != 0 {
			t.Errorf("%d store reads with no stream open, want 0", n)
		}

		// A task that ended before the stream began is reported at once,
		// once, and not watched.
		f.cancel(t, "alice", ids[1])
		c, got := f.listen(t, 3, "alice", map[string]any{"taskIds": ids[1:]})
		if fmt.Sprint(got["taskIds"]) != fmt.Sprint(ids[1:]) {
			t.Fatalf("acknowledged %v, want %v", got["taskIds"], ids[1:])
		}
		if id, status := taskNote(t, c); id != ids[1] || status != "cancelled" {
			t.Fatalf("got %s %s, want %s cancelled", id, status, ids[1])
		}
		if core.TaskPollerRunning(f.srv) {
			t.Fatal("the poller runs for a task that had ended")
		}
		time.Sleep(5 * interval)
		synctest.Wait()
		quiet(t, c, "the stream of an ended task")
	})
}
