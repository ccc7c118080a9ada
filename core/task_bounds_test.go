package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
)

// faultyTaskStore wraps a TaskStore: it counts the calls that reach it and
// fails them while down is set (as a store behind a cut network does).
type faultyTaskStore struct {
	inner core.TaskStore

	gets, creates, updates atomic.Int64
	down                   atomic.Bool
	// failUpdate, when set, decides whether an Update that reaches the
	// store fails (before it is applied).
	mu         sync.Mutex
	failUpdate func(*core.TaskRecord) error
}

var errStoreDown = errors.New("task store unreachable")

func newFaultyTaskStore() *faultyTaskStore { return &faultyTaskStore{inner: &memory.TaskStore{}} }

func (s *faultyTaskStore) Create(ctx context.Context, rec *core.TaskRecord, limit int) error {
	s.creates.Add(1)
	if s.down.Load() {
		return errStoreDown
	}
	return s.inner.Create(ctx, rec, limit)
}

func (s *faultyTaskStore) Get(ctx context.Context, id string) (*core.TaskRecord, error) {
	s.gets.Add(1)
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.inner.Get(ctx, id)
}

func (s *faultyTaskStore) Update(ctx context.Context, rec *core.TaskRecord) error {
	s.updates.Add(1)
	if s.down.Load() {
		return errStoreDown
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

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Task ids that core cannot have issued (too long, or outside the
// base64url alphabet) are answered as unknown ids at the door: -32602,
// no store call, no ERROR log. A 3,000-byte id used to reach DynamoDB,
// whose key limit turned it into -32603 "task store unavailable".
func TestTaskIDValidatedAtTheDoor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		store := newFaultyTaskStore()
		var logs lockedBuffer
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
