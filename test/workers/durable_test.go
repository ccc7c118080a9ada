package workers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/adapters/workers/durable"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/storetest"
	"github.com/mcpfn/mcpfn/test/internal/httpjson"
	"github.com/mcpfn/mcpfn/test/workers/workerdtest"
)

// stateWorker runs glue/state.mjs in workerd behind testdata/durable's
// Worker, and returns a durable.Caller that reaches its objects over HTTP.
func stateWorker(t *testing.T, bindings map[string]string) (*workerdtest.Worker, durable.Caller) {
	w := workerdtest.Start(t, "testdata/durable", bindings)
	call := func(ctx context.Context, binding, object, method, arg string) (string, error) {
		b, _ := json.Marshal(map[string]string{"binding": binding, "object": object, "method": method, "arg": arg})
		var out struct{ V, Err string }
		if _, err := httpjson.Post(ctx, w.URL+"/call", bytes.NewReader(b), &out); err != nil {
			return "", err
		}
		if out.Err != "" {
			return "", errors.New(out.Err)
		}
		return out.V, nil
	}
	return w, call
}

func TestDurableSessions(t *testing.T) {
	_, call := stateWorker(t, nil)
	storetest.Run(t, func(t *testing.T) core.SessionStore {
		return &durable.Sessions{Call: call, Prefix: storetest.NewID()[:16]}
	})
}

func TestDurableTasks(t *testing.T) {
	_, call := stateWorker(t, nil)
	storetest.RunTasks(t, func(t *testing.T) core.TaskStore { return &durable.Tasks{Call: call, Prefix: storetest.NewID()[:16]} }, durable.MaxRecordBytes)
}

func TestDurableChanges(t *testing.T) {
	_, call := stateWorker(t, nil)
	storetest.RunChangeBus(t, func(t *testing.T) core.ChangeBus {
		return &durable.Changes{Call: call, Prefix: storetest.NewID()[:16], Size: 40}
	}, 40)
}

// TestDurableChangesBytes: a log of long URIs keeps fewer changes than
// its Size rather than pass the object's value limit; a reader behind the
// kept window is told it missed some.
func TestDurableChangesBytes(t *testing.T) {
	_, call := stateWorker(t, nil)
	bus := &durable.Changes{Call: call, Prefix: storetest.NewID()[:16], Size: durable.MaxChangeLogSize}
	ctx := t.Context()
	uri := "test://" + strings.Repeat("u", core.MaxChangeURIBytes-len("test://"))
	const n = 300 // 300 × 2 KiB: more than the 120 KiB kept
	for i := range n {
		if err := bus.Publish(ctx, core.Change{Kind: core.ChangeResourceUpdated, URI: uri, Origin: fmt.Sprint(i)}); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	b, err := bus.Read(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Missed || len(b.Changes) >= n || len(b.Changes) < 40 || b.Next != n {
		t.Fatalf("read from 0: missed %v, %d changes, next %d; want missed, 40 to %d changes, next %d", b.Missed, len(b.Changes), b.Next, n-1, n)
	}
	t.Logf("%d changes of %d-byte URIs kept", len(b.Changes), len(uri))
	if last := b.Changes[len(b.Changes)-1]; last.Pos != n || last.URI != uri {
		t.Errorf("the newest change kept: %+v", last)
	}
}

func runs(t *testing.T, w *workerdtest.Worker) []string {
	t.Helper()
	resp, err := http.Get(w.URL + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	json.NewDecoder(resp.Body).Decode(&ids)
	return ids
}

func count(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// TestDurableRunner: Start makes the task's alarm call McpfnTasks.run once;
// a run that throws is tried again, six times in all, then given up; a
// task that does not exist is not scheduled.
func TestDurableRunner(t *testing.T) {
	w, call := stateWorker(t, map[string]string{"MCPFN_TASK_RETRY_MS": "5"})
	tasks := &durable.Tasks{Call: call}
	runner := &durable.Runner{Call: call}
	ctx := context.Background()
	for _, id := range []string{"okTask", "failTask"} {
		rec := storetest.NewTaskRecord("alice")
		rec.ID = id
		if err := tasks.Create(ctx, rec, core.TaskLimits{}); err != nil {
			t.Fatal(err)
		}
		if err := runner.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := runner.Start(ctx, "nothere"); !errors.Is(err, core.ErrTaskNotFound) {
		t.Errorf("Start of an unknown task: %v, want ErrTaskNotFound", err)
	}
	for i := 0; count(runs(t, w), "failTask") < 6 || count(runs(t, w), "okTask") < 1; i++ {
		if i == 5000 {
			t.Fatalf("runs seen: %v", runs(t, w))
		}
	}
	// A marker task scheduled now runs before a seventh attempt would be
	// due (5 ms × 2^5 after the sixth): the counts are read after it ran.
	marker := storetest.NewTaskRecord("bob")
	marker.ID = "marker"
	if err := tasks.Create(ctx, marker, core.TaskLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(ctx, "marker"); err != nil {
		t.Fatal(err)
	}
	for i := 0; !slices.Contains(runs(t, w), "marker"); i++ {
		if i == 5000 {
			t.Fatal("the marker task never ran")
		}
	}
	got := runs(t, w)
	if n := count(got, "okTask"); n != 1 {
		t.Errorf("a run that succeeded ran %d times", n)
	}
	if n := count(got, "failTask"); n != 6 {
		t.Errorf("a run that always fails ran %d times, want 6", n)
	}
}
