package core_test

import (
	"context"
	"testing"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/store/memory"
)

// nopRunner is a TaskRunner that is not the in-process one; it runs
// nothing (the test only asks the server where its tasks would run).
type nopRunner struct{}

func (nopRunner) Start(context.Context, string) error { return nil }

// TestTaskDeployment: what a deployment needs to know about a server's
// tasks, as the serverless adapters and the deploy kits ask it at start.
// ServesTasks follows the registered tools (a task tool added, then
// removed); PerProcessTasks and InProcessTaskRunner follow the options
// (nil TaskStore, nil TaskRunner), whatever the tools.
func TestTaskDeployment(t *testing.T) {
	t.Parallel()
	add := func(s *core.Server, name string, support core.TaskSupport) {
		core.AddTool(s, &core.Tool{Name: name}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil },
			&core.ToolOptions{TaskSupport: support})
	}

	s := core.NewServer(testImpl, nil)
	if s.ServesTasks() {
		t.Error("a server without tools: ServesTasks() = true")
	}
	add(s, "plain", "")
	add(s, "never", core.TaskForbidden)
	if s.ServesTasks() {
		t.Error("a server whose tools never run as tasks: ServesTasks() = true")
	}
	for _, support := range []core.TaskSupport{core.TaskOptional, core.TaskRequired} {
		add(s, "job", support)
		if !s.ServesTasks() {
			t.Errorf("a server with a %s task tool: ServesTasks() = false", support)
		}
		s.RemoveTools("job")
		if s.ServesTasks() {
			t.Errorf("the %s task tool removed: ServesTasks() = true", support)
		}
	}
	if !s.PerProcessTasks() || !s.InProcessTaskRunner() {
		t.Errorf("nil TaskStore and TaskRunner: PerProcessTasks() = %v, InProcessTaskRunner() = %v; want true, true",
			s.PerProcessTasks(), s.InProcessTaskRunner())
	}

	shared := core.NewServer(testImpl, &core.ServerOptions{TaskStore: &memory.TaskStore{}, TaskRunner: nopRunner{}})
	add(shared, "job", core.TaskRequired)
	if !shared.ServesTasks() || shared.PerProcessTasks() || shared.InProcessTaskRunner() {
		t.Errorf("TaskStore and TaskRunner set: ServesTasks() = %v, PerProcessTasks() = %v, InProcessTaskRunner() = %v; want true, false, false",
			shared.ServesTasks(), shared.PerProcessTasks(), shared.InProcessTaskRunner())
	}
	storeOnly := core.NewServer(testImpl, &core.ServerOptions{TaskStore: &memory.TaskStore{}})
	if storeOnly.PerProcessTasks() || !storeOnly.InProcessTaskRunner() {
		t.Errorf("TaskStore set, TaskRunner nil: PerProcessTasks() = %v, InProcessTaskRunner() = %v; want false, true",
			storeOnly.PerProcessTasks(), storeOnly.InProcessTaskRunner())
	}
	runnerOnly := core.NewServer(testImpl, &core.ServerOptions{TaskRunner: nopRunner{}})
	if !runnerOnly.PerProcessTasks() || runnerOnly.InProcessTaskRunner() {
		t.Errorf("TaskStore nil, TaskRunner set: PerProcessTasks() = %v, InProcessTaskRunner() = %v; want true, false",
			runnerOnly.PerProcessTasks(), runnerOnly.InProcessTaskRunner())
	}
}
