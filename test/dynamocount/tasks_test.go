package dynamocount_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/dynamo"
	"github.com/mcpfn/mcpfn/test/internal/dynalite"
)

// handOff is a core.TaskRunner that hands each started task to the test,
// which runs it (Server.RunTask) when it wants: the calls of the request
// that starts a task are then counted apart from those of its run.
type handOff chan string

func (h handOff) Start(_ context.Context, id string) error { h <- id; return nil }

// TestCallsPerTaskRequest counts the DynamoDB calls of the requests of the
// Tasks extension on the Dynamo TaskStore, and of a run: tasks/get reads
// one item and writes none, however often it is polled (tasks.md §Task
// Polling: polls faster than pollIntervalMs run nothing).
func TestCallsPerTaskRequest(t *testing.T) {
	t.Parallel()
	db, table := dynalite.Table(t, "dynamocount-")
	cnt := &counting{inner: db, n: calls{}}
	tasks, err := dynamo.NewTaskStore(cnt, &dynamo.Options{TableName: table})
	if err != nil {
		t.Fatal(err)
	}
	runs := make(handOff, 4)
	srv := core.NewServer(core.Implementation{Name: "dynamocount", Version: "1.0.0"},
		&core.ServerOptions{TaskStore: tasks, TaskRunner: runs, Keys: stateKey, Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close()
	core.AddTool(srv, &core.Tool{Name: "job", Description: "A task."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) { return "done", nil },
		&core.ToolOptions{TaskSupport: core.TaskRequired})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := t.Context()
	rep := &report{t: t}
	c := &mcptest.Client{URL: hs.URL, Caps: map[string]any{"extensions": map[string]any{core.ExtensionTasks: map[string]any{}}}}
	taskCall := func(method, id string) *mcptest.Response {
		t.Helper()
		return ok(t, method)(c.Call(ctx, method, map[string]any{"taskId": id}, http.Header{"Mcp-Name": {id}}))
	}
	create := func() string {
		t.Helper()
		res := ok(t, "tools/call")(c.Call(ctx, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{}}, nil))
		var out struct {
			TaskID string `json:"taskId"`
		}
		if err := res.Decode(&out); err != nil || out.TaskID == "" {
			t.Fatalf("tools/call: %v %s", err, res.Result)
		}
		if got := <-runs; got != out.TaskID {
			t.Fatalf("started %s, created %s", got, out.TaskID)
		}
		return out.TaskID
	}

	cnt.take()
	id := create()
	rep.check("tools/call creating a task (anonymous: a count shard)", cnt.take(), 1, 0, calls{"PutItem": 2})
	for range 20 {
		taskCall("tasks/get", id)
	}
	got := cnt.take()
	rep.check("tasks/get of a working task, 20 polls", got, 20, 0, nil)
	if got["GetItem"] != 20 {
		t.Errorf("20 polls: %s, want 20 GetItem", got)
	}
	if err := srv.RunTask(ctx, id); err != nil {
		t.Fatal(err)
	}
	rep.check("a run (claim, outcome), RunTask", cnt.take(), 2, 2, nil)
	res := taskCall("tasks/get", id)
	var done struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	if err := res.Decode(&done); err != nil || done.Status != "completed" || !strings.Contains(string(done.Result), "done") {
		t.Fatalf("tasks/get after the run: %v %s", err, res.Result)
	}
	rep.check("tasks/get of a completed task", cnt.take(), 1, 0, nil)

	id = create()
	cnt.take()
	taskCall("tasks/cancel", id)
	rep.check("tasks/cancel of a task not yet claimed", cnt.take(), 1, 1, nil)
	taskCall("tasks/cancel", id)
	rep.check("tasks/cancel again (idempotent ack)", cnt.take(), 1, 0, nil)
	t.Logf("DynamoDB calls per task request (TaskStore on dynalite):\n%s", strings.Join(rep.lines, "\n"))
}
