package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// RunTasks runs the suite every core.TaskStore must pass against stores
// made by newStore, each case in parallel with its own store: newStore
// must return a store that shares no tasks with the others. maxBytes is
// the store's record size limit (a record clearly above it must fail with
// core.ErrTaskTooLarge); zero skips that case.
func RunTasks(t *testing.T, newStore func(t *testing.T) core.TaskStore, maxBytes int) {
	tests := []struct {
		name string
		fn   func(*testing.T, core.TaskStore)
	}{
		{"CreateGetRoundTrip", testTaskRoundTrip},
		{"CreateIDInUse", testTaskIDInUse},
		{"GetUnknown", testTaskGetUnknown},
		{"UpdateIsCompareAndSet", testTaskCAS},
		{"UpdateMissing", testTaskUpdateMissing},
		{"Expiry", testTaskExpiry},
		{"LimitPerPrincipal", testTaskLimit},
		{"LimitCountsTerminalTasks", testTaskLimitTerminal},
		{"LimitIgnoresExpired", testTaskLimitExpired},
		{"NoLimit", testTaskNoLimit},
		{"ConcurrentCreatesRespectLimit", testTaskConcurrentCreates},
		{"LimitErrorSaysWhich", testTaskLimitError},
		{"ByteLimitPerPrincipal", testTaskByteLimit},
		{"ByteLimitAloneCounts", testTaskByteLimitAlone},
		{"ChargeFixedAtCreate", testTaskChargeFixed},
		{"ConcurrentCreatesRespectByteLimit", testTaskConcurrentByteLimit},
		{"ConcurrentTransitionsOneWins", testTaskConcurrentCAS},
		{"IsolatedRecords", testTaskIsolation},
	}
	if maxBytes > 0 {
		tests = append(tests, struct {
			name string
			fn   func(*testing.T, core.TaskStore)
		}{"TooLarge", func(t *testing.T, s core.TaskStore) { testTaskTooLarge(t, s, maxBytes) }})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

// NewTaskRecord returns a working task of principal that expires in an
// hour, with every field set, as core creates one.
func NewTaskRecord(principal string) *core.TaskRecord {
	now := time.Now().Truncate(time.Millisecond)
	return &core.TaskRecord{
		ID: NewID() + NewID(), Principal: principal,
		Caller: &core.Principal{Issuer: "https://issuer.example", ClientID: "c", Subject: principal, Scopes: []string{"a", "b"}},
		Method: "tools/call", Name: "slow", Arguments: json.RawMessage(`{"seconds":1}`),
		ProtocolVersion:    core.ProtocolVersion20260728,
		ClientCapabilities: json.RawMessage(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`),
		ClientInfo:         json.RawMessage(`{"name":"c","version":"1"}`),
		Status:             mcp.TaskWorking, StatusMessage: "started",
		InputResponses: map[string]json.RawMessage{"k0": json.RawMessage(`{"action":"accept","content":{"n":"x"}}`)},
		InputState:     "st", Round: 1, UsedKeys: []string{"k0"},
		Created: now, Updated: now, Expires: now.Add(time.Hour),
		Runner: "r1", LeaseExpires: now.Add(30 * time.Second),
	}
}

func mustCreateTask(t *testing.T, s core.TaskStore, rec *core.TaskRecord, limit int) {
	t.Helper()
	if err := s.Create(context.Background(), rec, core.TaskLimits{Tasks: limit}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if rec.Version != 1 {
		t.Fatalf("Create: Version = %d, want 1", rec.Version)
	}
}

func taskExists(t *testing.T, s core.TaskStore, id string) bool {
	t.Helper()
	_, err := s.Get(context.Background(), id)
	if err == nil {
		return true
	}
	if !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Get(%s): %v, want nil or ErrTaskNotFound", id, err)
	}
	return false
}

// sameTask compares every field, times at millisecond precision.
func sameTask(t *testing.T, got, want *core.TaskRecord) {
	t.Helper()
	norm := func(r *core.TaskRecord) string {
		c := *r
		for _, p := range []*time.Time{&c.Created, &c.Updated, &c.Expires, &c.LeaseExpires} {
			if !p.IsZero() {
				*p = time.UnixMilli(p.UnixMilli()).UTC()
			}
		}
		b, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Fatalf("stored record differs:\n got %s\nwant %s", g, w)
	}
}

func testTaskRoundTrip(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	rec := NewTaskRecord("p1")
	mustCreateTask(t, s, rec, 10)
	got, err := s.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, got, rec)
	// Every status and payload survives an Update.
	got.Status, got.StatusMessage = mcp.TaskInputRequired, "waiting"
	got.InputRequests = map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}`)}
	got.InputKeys = map[string]string{"q": "q0"}
	got.CancelRequested = true
	got.Runner, got.LeaseExpires = "", time.Time{}
	if err := s.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 {
		t.Fatalf("Version after Update = %d, want 2", got.Version)
	}
	again, err := s.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, again, got)
	again.Status, again.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
	again.Error = json.RawMessage(`{"code":-32603,"message":"m"}`)
	if err := s.Update(ctx, again); err != nil {
		t.Fatal(err)
	}
	final, err := s.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTask(t, final, again)
}

func testTaskIDInUse(t *testing.T, s core.TaskStore) {
	rec := NewTaskRecord("p")
	mustCreateTask(t, s, rec, 0)
	dup := NewTaskRecord("other")
	dup.ID = rec.ID
	if err := s.Create(context.Background(), dup, core.TaskLimits{}); !errors.Is(err, core.ErrTaskConflict) {
		t.Fatalf("Create with an id in use = %v, want ErrTaskConflict", err)
	}
	got, err := s.Get(context.Background(), rec.ID)
	if err != nil || got.Principal != "p" {
		t.Fatalf("after a refused Create: %+v, %v; want the first record", got, err)
	}
}

func testTaskGetUnknown(t *testing.T, s core.TaskStore) {
	if _, err := s.Get(context.Background(), NewID()); !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Get(unknown) = %v, want ErrTaskNotFound", err)
	}
}

func testTaskCAS(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	rec := NewTaskRecord("p")
	mustCreateTask(t, s, rec, 0)
	stale := *rec
	rec.StatusMessage = "one"
	if err := s.Update(ctx, rec); err != nil {
		t.Fatal(err)
	}
	stale.StatusMessage = "stale"
	if err := s.Update(ctx, &stale); !errors.Is(err, core.ErrTaskConflict) {
		t.Fatalf("stale Update = %v, want ErrTaskConflict", err)
	}
	got, _ := s.Get(ctx, rec.ID)
	if got.StatusMessage != "one" || got.Version != 2 {
		t.Fatalf("after a conflict: %q v%d, want \"one\" v2 (a failed Update changes nothing)", got.StatusMessage, got.Version)
	}
}

func testTaskUpdateMissing(t *testing.T, s core.TaskStore) {
	rec := NewTaskRecord("p")
	rec.Version = 1
	if err := s.Update(context.Background(), rec); !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Update(unknown) = %v, want ErrTaskNotFound", err)
	}
	if taskExists(t, s, rec.ID) {
		t.Fatal("Update of an unknown record created it")
	}
}

func testTaskExpiry(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	rec := NewTaskRecord("p")
	rec.Created = time.Now().Add(-2 * time.Hour)
	rec.Expires = time.Now().Add(-time.Minute)
	mustCreateTask(t, s, rec, 0)
	if taskExists(t, s, rec.ID) {
		t.Fatal("an expired task is found")
	}
	rec.StatusMessage = "late"
	if err := s.Update(ctx, rec); !errors.Is(err, core.ErrTaskNotFound) {
		t.Fatalf("Update(expired) = %v, want ErrTaskNotFound", err)
	}
	live := NewTaskRecord("p")
	mustCreateTask(t, s, live, 0)
	if !taskExists(t, s, live.ID) {
		t.Fatal("a live task is not found")
	}
}

func testTaskLimit(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	for range 3 {
		mustCreateTask(t, s, NewTaskRecord("p"), 3)
	}
	extra := NewTaskRecord("p")
	if err := s.Create(ctx, extra, core.TaskLimits{Tasks: 3}); !errors.Is(err, core.ErrTaskLimit) {
		t.Fatalf("Create past the limit = %v, want ErrTaskLimit", err)
	}
	if taskExists(t, s, extra.ID) {
		t.Fatal("a refused Create stored the task")
	}
	// Other principals, and anonymous callers, have pools of their own.
	mustCreateTask(t, s, NewTaskRecord("q"), 3)
	mustCreateTask(t, s, NewTaskRecord(""), 3)
}

func testTaskLimitTerminal(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	a := NewTaskRecord("p")
	mustCreateTask(t, s, a, 1)
	a.Status, a.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[]}`)
	if err := s.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, NewTaskRecord("p"), core.TaskLimits{Tasks: 1}); !errors.Is(err, core.ErrTaskLimit) {
		t.Fatalf("Create with a terminal unexpired task at the limit = %v, want ErrTaskLimit (the bound counts every unexpired task: results are kept for their TTL)", err)
	}
}

func testTaskLimitExpired(t *testing.T, s core.TaskStore) {
	old := NewTaskRecord("p")
	old.Expires = time.Now().Add(-time.Second)
	mustCreateTask(t, s, old, 1)
	mustCreateTask(t, s, NewTaskRecord("p"), 1) // the expired one does not count
}

func testTaskNoLimit(t *testing.T, s core.TaskStore) {
	for range 20 {
		mustCreateTask(t, s, NewTaskRecord("p"), 0)
	}
}

func testTaskConcurrentCreates(t *testing.T, s core.TaskStore) {
	concurrentCreates(t, s, core.TaskLimits{Tasks: 5}, 0, 5)
}

// concurrentCreates starts 24 Creates of one principal's tasks charging
// charge at once, under limits, and checks that exactly want are stored
// and the others refused with ErrTaskLimit.
func concurrentCreates(t *testing.T, s core.TaskStore, limits core.TaskLimits, charge int64, want int32) {
	t.Helper()
	const tries = 24
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range tries {
		wg.Go(func() {
			<-start
			switch err := s.Create(context.Background(), chargedRecord("p", charge), limits); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, core.ErrTaskLimit):
				limited.Add(1)
			default:
				t.Errorf("Create: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != want || limited.Load() != tries-want {
		t.Fatalf("%d concurrent Creates charging %d at %+v: %d stored, %d refused; want %d and %d",
			tries, charge, limits, ok.Load(), limited.Load(), want, tries-want)
	}
}

func testTaskConcurrentCAS(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	rec := NewTaskRecord("p")
	mustCreateTask(t, s, rec, 0)
	const writers = 8
	var won atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := *rec
			c.StatusMessage = strings.Repeat("x", i+1)
			<-start
			err := s.Update(ctx, &c)
			switch {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, core.ErrTaskConflict):
				t.Errorf("Update: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d writers of version 1: %d succeeded, want exactly 1", writers, won.Load())
	}
	got, _ := s.Get(ctx, rec.ID)
	if got.Version != 2 {
		t.Fatalf("Version = %d, want 2", got.Version)
	}
}

func testTaskIsolation(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	rec := NewTaskRecord("p")
	mustCreateTask(t, s, rec, 0)
	rec.InputResponses["k0"][0] = '!' // the caller's buffers are not the store's
	rec.StatusMessage = "changed locally"
	got, err := s.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusMessage != "started" || string(got.InputResponses["k0"])[0] != '{' {
		t.Fatalf("the stored record changed with the caller's: %+v", got)
	}
	got.Arguments[0] = '!'
	again, _ := s.Get(ctx, rec.ID)
	if string(again.Arguments) != `{"seconds":1}` {
		t.Fatalf("a returned record aliases the stored one: %s", again.Arguments)
	}
}

func testTaskTooLarge(t *testing.T, s core.TaskStore, maxBytes int) {
	ctx := context.Background()
	big := NewTaskRecord("p")
	big.Result = json.RawMessage(`"` + strings.Repeat("x", maxBytes) + `"`)
	if err := s.Create(ctx, big, core.TaskLimits{}); !errors.Is(err, core.ErrTaskTooLarge) {
		t.Fatalf("Create of a record above %d bytes = %v, want ErrTaskTooLarge", maxBytes, err)
	}
	rec := NewTaskRecord("p")
	mustCreateTask(t, s, rec, 0)
	rec.Status, rec.Result = mcp.TaskCompleted, big.Result
	if err := s.Update(ctx, rec); !errors.Is(err, core.ErrTaskTooLarge) {
		t.Fatalf("Update to a record above %d bytes = %v, want ErrTaskTooLarge", maxBytes, err)
	}
	got, _ := s.Get(ctx, rec.ID)
	if got.Status != mcp.TaskWorking || got.Version != 1 {
		t.Fatalf("a refused Update changed the record: %s v%d", got.Status, got.Version)
	}
}

// chargedRecord is NewTaskRecord with the given Charge.
func chargedRecord(principal string, charge int64) *core.TaskRecord {
	r := NewTaskRecord(principal)
	r.Charge = charge
	return r
}

// wantLimitError checks that err is a *core.TaskLimitError (and
// ErrTaskLimit) with reason and limit, whose RetryAt is retryAt at
// millisecond precision.
func wantLimitError(t *testing.T, err error, reason string, limit int64, retryAt time.Time) {
	t.Helper()
	var le *core.TaskLimitError
	if !errors.Is(err, core.ErrTaskLimit) || !errors.As(err, &le) {
		t.Fatalf("Create past the bound = %v, want a *core.TaskLimitError", err)
	}
	if le.Reason != reason || le.Limit != limit {
		t.Fatalf("TaskLimitError = %+v, want reason %s and limit %d", le, reason, limit)
	}
	if le.RetryAt.UnixMilli() != retryAt.UnixMilli() {
		t.Fatalf("TaskLimitError.RetryAt = %v, want %v (the earliest expiry of the tasks that fill the bound)", le.RetryAt, retryAt)
	}
}

func testTaskLimitError(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	first := NewTaskRecord("p")
	first.Expires = first.Expires.Add(-10 * time.Minute) // expires first
	mustCreateTask(t, s, first, 2)
	mustCreateTask(t, s, NewTaskRecord("p"), 2)
	err := s.Create(ctx, NewTaskRecord("p"), core.TaskLimits{Tasks: 2})
	wantLimitError(t, err, core.TaskLimitCount, 2, first.Expires)
}

func testTaskByteLimit(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	limits := core.TaskLimits{Tasks: 10, Bytes: 250}
	a := chargedRecord("p", 100)
	a.Expires = a.Expires.Add(-5 * time.Minute)
	for _, r := range []*core.TaskRecord{a, chargedRecord("p", 100)} {
		if err := s.Create(ctx, r, limits); err != nil {
			t.Fatalf("Create within the byte bound: %v", err)
		}
	}
	extra := chargedRecord("p", 100)
	wantLimitError(t, s.Create(ctx, extra, limits), core.TaskLimitBytes, 250, a.Expires)
	if taskExists(t, s, extra.ID) {
		t.Fatal("a refused Create stored the task")
	}
	// What still fits is taken; other principals have bounds of their own.
	if err := s.Create(ctx, chargedRecord("p", 50), limits); err != nil {
		t.Fatalf("Create of the 50 bytes left: %v", err)
	}
	if err := s.Create(ctx, chargedRecord("q", 250), limits); err != nil {
		t.Fatalf("Create of another principal: %v", err)
	}
	// A terminal task still charges its bytes; an expired one does not.
	a.Status, a.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[]}`)
	if err := s.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, chargedRecord("p", 1), limits); !errors.Is(err, core.ErrTaskLimit) {
		t.Fatalf("Create past the byte bound with a terminal task = %v, want ErrTaskLimit", err)
	}
	old := chargedRecord("r", 200)
	old.Expires = time.Now().Add(-time.Second)
	if err := s.Create(ctx, old, limits); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, chargedRecord("r", 200), limits); err != nil {
		t.Fatalf("an expired task's bytes still count: %v", err)
	}
}

func testTaskByteLimitAlone(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	limits := core.TaskLimits{Bytes: 100} // no bound of the number
	if err := s.Create(ctx, chargedRecord("p", 60), limits); err != nil {
		t.Fatal(err)
	}
	err := s.Create(ctx, chargedRecord("p", 60), limits)
	var le *core.TaskLimitError
	if !errors.As(err, &le) || le.Reason != core.TaskLimitBytes {
		t.Fatalf("Create past a byte bound without a count bound = %v, want reason %s", err, core.TaskLimitBytes)
	}
}

func testTaskChargeFixed(t *testing.T, s core.TaskStore) {
	ctx := context.Background()
	limits := core.TaskLimits{Bytes: 200}
	a := chargedRecord("p", 150)
	if err := s.Create(ctx, a, limits); err != nil {
		t.Fatal(err)
	}
	a.Charge = 0 // an Update does not change what the task is charged
	if err := s.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, chargedRecord("p", 100), limits); !errors.Is(err, core.ErrTaskLimit) {
		t.Fatalf("Create after an Update that lowered Charge = %v, want ErrTaskLimit: the charge is fixed at Create", err)
	}
}

func testTaskConcurrentByteLimit(t *testing.T, s core.TaskStore) {
	concurrentCreates(t, s, core.TaskLimits{Tasks: 100, Bytes: 50}, 10, 5)
}
