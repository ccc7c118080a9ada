package memory_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
	"github.com/mcpfn/mcpfn/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) core.SessionStore { return &memory.Store{} })
}

func TestTaskStore(t *testing.T) {
	t.Parallel()
	storetest.RunTasks(t, func(t *testing.T) core.TaskStore { return &memory.TaskStore{} }, 400<<10)
}

func TestChangeBus(t *testing.T) {
	t.Parallel()
	storetest.RunChangeBus(t, func(t *testing.T) core.ChangeBus { return &memory.ChangeBus{} }, core.MemoryChangeBusSize)
}

// MaxTotalBytes bounds the whole store, whoever the principals: a Create
// that would pass it is refused with reason task_store_full and a retry
// time (the earliest expiry), while Updates of stored tasks, which record
// outcomes, are never refused for it.
func TestTaskStoreMaxTotalBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := &memory.TaskStore{MaxTotalBytes: 64 << 10}
	first := storetest.NewTaskRecord("p0")
	first.Expires = first.Expires.Add(-time.Minute)
	first.Arguments = json.RawMessage(`{"pad":"` + strings.Repeat("x", 10<<10) + `"}`)
	if err := s.Create(ctx, first, core.TaskLimits{}); err != nil {
		t.Fatal(err)
	}
	stored := 1
	var le *core.TaskLimitError
	for i := 1; i < 20; i++ {
		r := storetest.NewTaskRecord("p" + strconv.Itoa(i))
		r.Arguments = first.Arguments
		err := s.Create(ctx, r, core.TaskLimits{Tasks: 1})
		if err == nil {
			stored++
			continue
		}
		if !errors.As(err, &le) || le.Reason != core.TaskLimitStoreFull || le.Limit != 64<<10 {
			t.Fatalf("Create into a full store = %v, want reason %s", err, core.TaskLimitStoreFull)
		}
		break
	}
	if stored < 5 || s.Bytes() > 64<<10 {
		t.Fatalf("%d tasks of 10 KiB stored, %d bytes; want the store filled up to 64 KiB", stored, s.Bytes())
	}
	if le.RetryAt.UnixMilli() != first.Expires.UnixMilli() {
		t.Fatalf("RetryAt = %v, want the earliest expiry %v", le.RetryAt, first.Expires)
	}
	first.Result = json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("y", 20<<10) + `"}]}`)
	if err := s.Update(ctx, first); err != nil {
		t.Fatalf("an Update past the store's bound = %v, want it stored", err)
	}
}
