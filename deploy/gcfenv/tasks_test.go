package gcfenv_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
	"github.com/mcpfn/mcpfn/internal/mcptest"
	"github.com/mcpfn/mcpfn/store/memory"
)

// taskTools adds a tool and, with tasks, a tool that runs as a task.
func taskTools(tasks bool) func(*core.Server) {
	return func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
		if tasks {
			core.AddTool(s, &core.Tool{Name: "job"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "done", nil },
				&core.ToolOptions{TaskSupport: core.TaskOptional})
		}
	}
}

// TestHandlerRefusesTasksInMemory: the kit keeps tasks in the instance's
// memory, so on many instances a poll that reaches another instance gets
// -32602 (unknown task), against the Tasks extension's rule that a new
// task is readable at once. Handler (and so Start) refuses a server with
// task tools unless MCPFN_MAX_INSTANCES=1 says the function runs one
// instance; a server without task tools starts whatever the variable says.
func TestHandlerRefusesTasksInMemory(t *testing.T) {
	for name, c := range map[string]struct {
		kv    []string
		tasks bool
		ok    bool
	}{
		"tasks, many instances":      {nil, true, false},
		"tasks, ten instances":       {[]string{"MCPFN_MAX_INSTANCES", "10"}, true, false},
		"tasks, unbounded instances": {[]string{"MCPFN_MAX_INSTANCES", "0"}, true, false},
		"tasks, one instance":        {[]string{"MCPFN_MAX_INSTANCES", "1"}, true, true},
		"no tasks, many instances":   {nil, false, true},
		"no tasks, one instance":     {[]string{"MCPFN_MAX_INSTANCES", "1"}, false, true},
		"tasks, inprocess, many":     {[]string{"MCPFN_TASK_RUNNER", "inprocess"}, true, false},
		"tasks, inprocess, one":      {[]string{"MCPFN_TASK_RUNNER", "inprocess", "MCPFN_MAX_INSTANCES", "1"}, true, true},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, append([]string{"MCPFN_LOG_LEVEL", "error"}, c.kv...)...)
			h, err := gcfenv.Handler(core.Implementation{Name: "t", Version: "1"}, taskTools(c.tasks))
			if c.ok {
				if err != nil || h == nil {
					t.Fatalf("Handler refuses: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Handler accepted task tools whose tasks live in one of many instances")
			}
			for _, want := range []string{"task tools", "-32602", "MCPFN_MAX_INSTANCES=1", "max_instance_count = 1", "TaskStore"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// TestOneInstance: with MCPFN_MAX_INSTANCES=1 Load keeps the tasks in
// store/memory's TaskStore, the one instance's memory being every
// instance's, so adapters/gcf does not warn about them; a task created
// through the handler is then read back through it.
func TestOneInstance(t *testing.T) {
	setenv(t, "MCPFN_MAX_INSTANCES", "1")
	opts, err := gcfenv.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.TaskStore.(*memory.TaskStore); !ok {
		t.Errorf("MCPFN_MAX_INSTANCES=1: TaskStore = %T, want *memory.TaskStore", opts.TaskStore)
	}
	for _, n := range []string{"", "0", "2", "100"} {
		t.Setenv("MCPFN_MAX_INSTANCES", n)
		if opts, err := gcfenv.Load(); err != nil || opts.TaskStore != nil {
			t.Errorf("MCPFN_MAX_INSTANCES=%q: %v, TaskStore %T; want nil", n, err, opts.TaskStore)
		}
	}

	t.Setenv("MCPFN_MAX_INSTANCES", "1")
	t.Setenv("MCPFN_LOG_FORMAT", "text")
	stderr := captureStderr(t)
	h, err := gcfenv.Handler(core.Implementation{Name: "t", Version: "1"}, taskTools(true))
	if err != nil {
		t.Fatal(err)
	}
	if log := stderr(); strings.Contains(log, "task") {
		t.Errorf("one declared instance, yet the start logs about tasks:\n%s", log)
	}
	ts := httptest.NewServer(http.HandlerFunc(h))
	defer ts.Close()
	caps := map[string]any{"extensions": map[string]any{core.ExtensionTasks: map[string]any{}}}
	c := &mcptest.Client{URL: ts.URL, Caps: caps}
	id, err := c.CreateTask(t.Context(), "job", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The task is readable at once (tasks.md §Task Creation), through the
	// instance that created it, which is every instance.
	got, err := c.Call(t.Context(), "tasks/get", map[string]any{"taskId": id}, http.Header{"Mcp-Name": {id}})
	if err != nil {
		t.Fatal(err)
	}
	var task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	if err := got.Decode(&task); err != nil || task.TaskID != id || (task.Status != "working" && task.Status != "completed") {
		t.Errorf("tasks/get of the new task: %v %s", err, got.Result)
	}
}

// captureStderr points os.Stderr at a file until the test ends, and
// returns a function reading what was written to it so far: the kit's
// logger writes to the os.Stderr of when Load ran.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	prev := os.Stderr
	os.Stderr = f
	t.Cleanup(func() { os.Stderr = prev; f.Close() })
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// TestTaskClaimTimeout: MCPFN_TASK_CLAIM_TIMEOUT is whole seconds or a Go
// duration; unset leaves core's default.
func TestTaskClaimTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "45": 45 * time.Second, "10m": 10 * time.Minute} {
		setenv(t, "MCPFN_TASK_CLAIM_TIMEOUT", v)
		opts, err := gcfenv.Load()
		if err != nil || opts.TaskClaimTimeout != want {
			t.Errorf("MCPFN_TASK_CLAIM_TIMEOUT=%q: %v, TaskClaimTimeout %v; want %v", v, err, opts.TaskClaimTimeout, want)
		}
	}
}
