package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/core"
)

// Tools of the Tasks extension's scenarios (io.modelcontextprotocol/tasks,
// the "Required server fixtures" of the suite's tasks-* scenarios). A
// task tool is an ordinary re-entrant handler registered with
// ToolOptions.TaskSupport: for a 2026-07-28 call that declares the
// extension the server answers with a task and runs the handler in it.
func addTaskTools(s *core.Server) {
	optional := &core.ToolOptions{TaskSupport: core.TaskOptional}
	required := &core.ToolOptions{TaskSupport: core.TaskRequired}

	type greetArgs struct {
		Name string `json:"name"`
	}
	core.AddTool(s, &core.Tool{Name: "greet", Description: "Greets by name (never a task)."},
		func(ctx context.Context, req *core.CallToolRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	type computeArgs struct {
		Seconds float64 `json:"seconds,omitempty" jsonschema:"description=How long to work\\, in seconds (at most 300)"`
		Label   string  `json:"label,omitempty"`
	}
	core.AddTool(s, &core.Tool{Name: "slow_compute", Description: "Works for the given seconds, then answers; a task when the client declares the tasks extension."},
		func(ctx context.Context, req *core.CallToolRequest, in computeArgs) (*core.CallToolResult, error) {
			d := time.Duration(min(max(in.Seconds, 0), 300) * float64(time.Second))
			req.NotifyProgress(ctx, 0, 1, "computing "+in.Label)
			select {
			case <-ctx.Done():
				return nil, ctx.Err() // a cancelled task ends cancelled
			case <-time.After(d):
			}
			return text(fmt.Sprintf("computed %q in %gs", in.Label, in.Seconds)), nil
		}, optional)

	core.AddTool(s, &core.Tool{Name: "failing_job", Description: "A task that ends with a tool error after about a second."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			sleep(ctx, time.Second)
			return nil, core.ToolErrorf("failing_job: the job failed")
		}, required)

	core.AddTool(s, &core.Tool{Name: "protocol_error_job", Description: "A task that fails with a JSON-RPC error."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			return nil, core.NewError(core.CodeInternalError, "protocol_error_job: the job failed at the protocol level")
		}, optional)

	confirmForm := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Delete it?"}},"required":["confirm"]}`)
	type deleteArgs struct {
		Filename string `json:"filename"`
	}
	core.AddTool(s, &core.Tool{Name: "confirm_delete", Description: "A task that asks the user to confirm, then answers."},
		func(ctx context.Context, req *core.CallToolRequest, in deleteArgs) (*core.CallToolResult, error) {
			r, ok := req.Input.Elicitation("confirm")
			if !ok {
				return nil, core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Delete "+in.Filename+"?", confirmForm)}, "")
			}
			if r.Action == core.ActionAccept && r.Content["confirm"] == true {
				return text("Deleted " + in.Filename + "."), nil
			}
			return text("Kept " + in.Filename + "."), nil
		}, optional)

	nameForm := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)
	core.AddTool(s, &core.Tool{Name: "multi_input", Description: "A task that asks for two inputs at once."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			a, okA := req.Input.Elicitation("name")
			b, okB := req.Input.Elicitation("confirm")
			if !okA || !okB {
				return nil, core.InputRequired(core.InputRequests{
					"name":    core.ElicitForm("What is your name?", nameForm),
					"confirm": core.ElicitForm("Proceed?", confirmForm),
				}, "")
			}
			return text(fmt.Sprintf("name: %s, confirm: %s", a.Action, b.Action)), nil
		}, optional)

	type userName struct {
		Name string `json:"name"`
	}
	core.AddTool(s, &core.Tool{Name: "test_tool_with_task", Description: "Asks for a name (multi round-trip), then continues as a task."},
		func(ctx context.Context, req *core.CallToolRequest, _ none) (*core.CallToolResult, error) {
			n, action, err := core.Answer[userName](req.Input, "user_name")
			switch {
			case err != nil:
				return nil, err
			case action == "":
				return nil, core.InputRequired(core.InputRequests{"user_name": core.ElicitForm("What is your name?", nameForm)}, "")
			case action != core.ActionAccept:
				return text("No name given (" + action + ")."), nil
			}
			if err := req.StartTask(); err != nil {
				return nil, err // the call continues as a task
			}
			return text("Hello, " + n.Name + "! (from task " + req.TaskID() + ")"), nil
		}, &core.ToolOptions{TaskSupport: core.TaskRequired, DeferTask: true})
}
