package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/test/internal/taskwire"
)

// The Tasks extension (io.modelcontextprotocol/tasks) across replicas: the
// task records live in the session table (store/dynamo's TaskStore, wired
// by deploy/lambdaenv from MCPFN_DYNAMODB_TABLE), the runs in the replica
// that created or resumed the task (the in-process runner), cancellations
// reach a run through the store.

var taskCaps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// taskRequest sends a tasks/* request for id to url (Mcp-Name is the task
// id: tasks.md §Streamable HTTP: Routing Headers) and returns the result.
func taskRequest(t *testing.T, url, method, id string, params map[string]any) json.RawMessage {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["taskId"] = id
	res, err := (&mcptest.Client{URL: url, Caps: taskCaps}).Call(t.Context(), method, params, http.Header{"Mcp-Name": {id}})
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, id, url, err)
	}
	if res.Error != nil {
		t.Fatalf("%s %s on %s: %+v", method, id, url, res.Error)
	}
	return res.Result
}

func getTask(t *testing.T, url, id string) *taskwire.Task {
	t.Helper()
	var tk taskwire.Task
	if err := json.Unmarshal(taskRequest(t, url, "tasks/get", id, nil), &tk); err != nil {
		t.Fatal(err)
	}
	return &tk
}

// createTask calls a task tool on url and returns the task's id.
func createTask(t *testing.T, url, tool string, args map[string]any) string {
	t.Helper()
	res, err := (&mcptest.Client{URL: url, Caps: taskCaps}).Call(t.Context(), "tools/call", map[string]any{"name": tool, "arguments": args}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := res.Decode(&out); err != nil || out.ResultType != "task" || out.TaskID == "" {
		t.Fatalf("tools/call %s on %s: %v %s %+v", tool, url, err, res.Result, res.Error)
	}
	return out.TaskID
}

// waitTask polls tasks/get for id, on the urls in turn, at the task's
// pollIntervalMs (tasks.md §Task Polling: clients SHOULD honour it) until
// done returns true, and returns that task and the replica that answered;
// it fails the test after limit.
func waitTask(t *testing.T, urls []string, id string, limit time.Duration, done func(*taskwire.Task) bool) (*taskwire.Task, int) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for i := 0; ; i++ {
		tk := getTask(t, urls[i%len(urls)], id)
		if done(tk) {
			return tk, i % len(urls)
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s after %v: status %s (%s)", id, limit, tk.Status, tk.StatusMessage)
		}
		wait := time.Duration(max(tk.PollIntervalMs, 50)) * time.Millisecond
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(wait):
		}
	}
}

func urlsOf(c *Cluster, slots ...int) []string {
	var us []string
	for _, s := range slots {
		us = append(us, c.Replica(s).URL)
	}
	return us
}

// TestTasksAcrossReplicas: a task created on one replica is polled,
// answered (tasks/update) and cancelled through the others.
func TestTasksAcrossReplicas(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	a, b, cc := c.Replica(0).URL, c.Replica(1).URL, c.Replica(2).URL

	// Created on A; tasks/get on B resolves at once (durably created) and
	// shows the input request; tasks/update on C answers it (C runs the
	// handler again); the result is read on A and on B.
	id := createTask(t, a, "confirm_delete", map[string]any{"filename": "notes.txt"})
	if tk := getTask(t, b, id); tk.TaskID != id {
		t.Fatalf("tasks/get on B right after the creation on A: %+v", tk)
	}
	tk, _ := waitTask(t, []string{b}, id, 10*time.Second, func(tk *taskwire.Task) bool { return tk.Status != "working" })
	if tk.Status != "input_required" || len(tk.InputRequests) != 1 {
		t.Fatalf("on B: %+v, want input_required with one request", tk)
	}
	responses := map[string]any{}
	for k := range tk.InputRequests {
		responses[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	var ack map[string]any
	if err := json.Unmarshal(taskRequest(t, cc, "tasks/update", id, map[string]any{"inputResponses": responses}), &ack); err != nil || ack["resultType"] != "complete" {
		t.Fatalf("tasks/update on C: %v %v", ack, err)
	}
	tk, _ = waitTask(t, []string{a}, id, 10*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	if tk.Status != "completed" || tk.Text() != "Deleted notes.txt." {
		t.Fatalf("on A after the update on C: %+v (%q)", tk, tk.Text())
	}
	if tb := getTask(t, b, id); tb.Status != "completed" || tb.Text() != tk.Text() {
		t.Fatalf("on B: %+v", tb)
	}

	// Running on B (it created it); cancelled through A; B's run sees the
	// cancellation in the store and the task ends cancelled, seen on C.
	id = createTask(t, b, "slow_compute", map[string]any{"seconds": 60, "label": "cancel-me"})
	if tk := getTask(t, cc, id); tk.Status != "working" {
		t.Fatalf("on C: %+v, want working", tk)
	}
	if err := json.Unmarshal(taskRequest(t, a, "tasks/cancel", id, nil), &ack); err != nil || ack["resultType"] != "complete" || ack["taskId"] != nil {
		t.Fatalf("tasks/cancel on A: %v %v", ack, err)
	}
	tk, _ = waitTask(t, []string{cc}, id, 10*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	if tk.Status != "cancelled" {
		t.Fatalf("on C after the cancel on A: %+v, want cancelled", tk)
	}

	// Through the round-robin proxy, as a client sees the fleet: every
	// request to the next replica.
	id = createTask(t, c.URL, "slow_compute", map[string]any{"seconds": 1, "label": "proxied"})
	tk, _ = waitTask(t, []string{c.URL}, id, 10*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) })
	if tk.Status != "completed" || !strings.Contains(tk.Text(), "proxied") {
		t.Fatalf("through the proxy: %+v", tk)
	}
	served := map[string]bool{}
	for _, r := range c.Proxy.Records() {
		if r.RPCMethod == "tasks/get" {
			served[r.Replica] = true
		}
	}
	if len(served) < 2 {
		t.Errorf("the proxied polls reached %v: want several replicas", served)
	}
}

// TestTaskReplicaKilledMidTask: the replica running a task is killed
// (SIGKILL: no shutdown, no last write). The task must not stay working:
// once the run's lease lapses (-task-lease 2s here), the next tasks/get on
// any replica records it failed, with a JSON-RPC error saying its runner
// stopped; it is not run again elsewhere (a handler may have had effects
// before the kill: re-running it is the client's decision).
func TestTaskReplicaKilledMidTask(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	c := newCluster(t, 3, "-task-lease", lease.String())
	id := createTask(t, c.Replica(0).URL, "slow_compute", map[string]any{"seconds": 60, "label": "doomed"})
	// Working, held by A's run: B sees it so across a heartbeat.
	tk, _ := waitTask(t, urlsOf(c, 1), id, 5*time.Second, func(tk *taskwire.Task) bool { return tk.StatusMessage != "" || tk.Status != "working" })
	if tk.Status != "working" || !strings.Contains(tk.StatusMessage, "doomed") {
		t.Fatalf("before the kill: %+v", tk)
	}
	if err := c.StopReplica(t.Context(), 0, false); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	tk, by := waitTask(t, urlsOf(c, 1, 2), id, 5*lease+5*time.Second, func(tk *taskwire.Task) bool { return tk.Status != "working" })
	elapsed := time.Since(killed)
	if tk.Status != "failed" || tk.Error == nil || tk.Error.Code != -32603 || tk.Result != nil {
		t.Fatalf("after the kill: %+v, want failed with a -32603 error", tk)
	}
	t.Logf("A killed; the task was failed %v later through %c: %d %q", elapsed.Round(100*time.Millisecond), 'B'+by, tk.Error.Code, tk.Error.Message)
	// It stays failed, on every replica, and no one runs it again.
	for _, u := range urlsOf(c, 1, 2) {
		if again := getTask(t, u, id); again.Status != "failed" {
			t.Fatalf("on %s later: %+v", u, again)
		}
	}
	// The survivors still serve tasks.
	id2 := createTask(t, c.Replica(1).URL, "slow_compute", map[string]any{"seconds": 0, "label": "after"})
	if tk, _ := waitTask(t, urlsOf(c, 2), id2, 10*time.Second, func(tk *taskwire.Task) bool { return terminal(tk.Status) }); tk.Status != "completed" {
		t.Fatalf("a task after the kill: %+v", tk)
	}
}

// TestTaskSurvivesGracefulRestart: a rolling restart's step (drain,
// SIGTERM) of the replica running a task lets the task finish there
// (-task-grace), and the result is read on the others; a task that
// outlasts the grace ends failed at once, not a lease later.
func TestTaskSurvivesGracefulRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, "-task-grace", "5s")
	short := createTask(t, c.Replica(0).URL, "slow_compute", map[string]any{"seconds": 2, "label": "short"})
	long := createTask(t, c.Replica(0).URL, "slow_compute", map[string]any{"seconds": 60, "label": "long"})
	start := time.Now()
	if _, err := c.Restart(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	restart := time.Since(start)
	tk := getTask(t, c.Replica(1).URL, short)
	if tk.Status != "completed" || !strings.Contains(tk.Text(), "short") {
		t.Fatalf("the short task after its replica's graceful restart (%v): %+v", restart, tk)
	}
	tk = getTask(t, c.Replica(2).URL, long)
	if tk.Status != "failed" || tk.Error == nil || tk.Error.Code != -32603 {
		t.Fatalf("the long task after the grace: %+v, want failed at once", tk)
	}
	t.Logf("restart took %v; long task: %q", restart.Round(100*time.Millisecond), tk.Error.Message)
}
