package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/nethttp"
	"github.com/mcpfn/mcpfn/client"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/mcp"
)

// The client's task support against mcpfn's own server (core, the Tasks
// extension with its in-process runner and memory store).

// taskCore serves a core.Server with four task tools: greet asks for a
// name (an input round inside the task) and greets it, deferred asks
// before the task exists (a multi round-trip round of the tools/call),
// oops is a tool error, block runs until its context ends (a cancelled
// task).
func taskCore(t *testing.T) (url string, started, stopped <-chan struct{}) {
	t.Helper()
	srv := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, &core.ServerOptions{TaskPollInterval: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	task := &core.ToolOptions{TaskSupport: core.TaskRequired}
	core.AddTool(srv, &core.Tool{Name: "greet"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		if r, ok := req.Input.Elicitation("name"); ok {
			return "Hello, " + r.Content["name"].(string) + "!", nil
		}
		return "", core.InputRequired(core.InputRequests{"name": core.ElicitForm("name?",
			json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))}, "")
	}, task)
	core.AddTool(srv, &core.Tool{Name: "oops"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		return "", core.ToolErrorf("bad input")
	}, task)
	core.AddTool(srv, &core.Tool{Name: "deferred"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		r, ok := req.Input.Elicitation("go")
		if !ok {
			return "", core.InputRequired(core.InputRequests{"go": core.ElicitForm("go?",
				json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))}, "")
		}
		if err := req.StartTask(); err != nil {
			return "", err
		}
		return "task " + req.TaskID() + " after " + r.Action, nil
	}, &core.ToolOptions{TaskSupport: core.TaskRequired, DeferTask: true})
	run, stop := make(chan struct{}), make(chan struct{})
	core.AddTool(srv, &core.Tool{Name: "block"}, func(ctx context.Context, req *core.CallToolRequest, _ none) (string, error) {
		close(run)
		<-ctx.Done()
		close(stop)
		return "", ctx.Err()
	}, task)
	ts := httptest.NewServer(nethttp.NewHandler(srv, nil))
	t.Cleanup(ts.Close)
	return ts.URL + nethttp.DefaultPath, run, stop
}

// TestTaskCore: against core, a task with an input round completes with
// the greeting (the elicitation answered once), an input round before the
// task (DeferTask) is answered as a multi round-trip request's and the
// task then created and waited for, a tool error completes
// with IsError, a call without the extension gets -32021, and a call whose
// context ends cancels its task: the handler's context ends and the task
// reads cancelled.
func TestTaskCore(t *testing.T) {
	t.Parallel()
	url, started, stopped := taskCore(t)
	ctx := t.Context()
	asked := 0
	c, err := client.Connect(ctx, url, &client.Options{Tasks: true, Elicitation: func(context.Context, *client.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Luca"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Discovery().Capabilities.Extensions[mcp.ExtensionTasks]; !ok {
		t.Fatalf("core does not advertise the extension: %s", c.Discovery().Raw)
	}
	var id string
	r, err := c.CallTool(ctx, "greet", nil, &client.CallOptions{TaskStatus: func(tk *mcp.DetailedTask) { id = tk.TaskID }})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "Hello, Luca!" || asked != 1 {
		t.Fatalf("greet: %+v, asked %d times", r, asked)
	}
	if tk, err := c.Task(id, nil).Get(ctx); err != nil || tk.Status != mcp.TaskCompleted {
		t.Fatalf("greet's task afterwards: %+v, %v", tk, err)
	}
	// The multi round-trip round comes first, then the task (tasks.md
	// §Task Creation), with the same handler.
	asked = 0
	var created bool
	r, err = c.CallTool(ctx, "deferred", nil, &client.CallOptions{TaskStatus: func(*mcp.DetailedTask) { created = true }})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || !strings.HasPrefix(tc.Text, "task ") || !strings.HasSuffix(tc.Text, " after accept") || asked != 1 || !created {
		t.Fatalf("deferred: %+v, asked %d times, task seen %v", r, asked, created)
	}
	if r, err := c.CallTool(ctx, "oops", nil, nil); err != nil || !r.IsError {
		t.Fatalf("oops: %+v, %v; want IsError", r, err)
	}
	plain := connect(t, ctx, url, nil)
	if _, err := plain.CallTool(ctx, "greet", nil, nil); !errors.Is(err, mcp.ErrMissingCapability) {
		t.Fatalf("without the extension: %v, want -32021", err)
	}

	// Cancelled once the client knows the task and its handler runs: a
	// task cancelled before a run claims it ends without running its
	// handler, and a call cancelled before its CreateTaskResult arrives
	// knows no task to cancel.
	short, cancel := context.WithCancel(ctx)
	known := make(chan struct{})
	var once sync.Once
	go func() { <-started; <-known; cancel() }()
	_, err = c.CallTool(short, "block", nil, &client.CallOptions{TaskStatus: func(tk *mcp.DetailedTask) {
		once.Do(func() { id = tk.TaskID; close(known) })
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("block: %v, want context.Canceled", err)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the task's handler was not cancelled")
	}
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("block's task did not end after its handler returned")
		}
		tk, err := c.Task(id, nil).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status.Terminal() {
			if tk.Status != mcp.TaskCancelled {
				t.Fatalf("block's task ended %s, want cancelled", tk.Status)
			}
			break
		}
	}
}
