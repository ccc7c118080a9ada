//go:build js && wasm

// Command workers is an mcpfn server on Cloudflare Workers: the calculator,
// a tool that streams its progress, and a tool that runs as a task, with
// sessions and tasks in Durable Objects (see docs/workers.md).
//
//	mcpfn package workers -dev-key -o dist ./examples/workers
//	npx workerd serve dist/workerd.capnp   # serves http://127.0.0.1:8787/mcp
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpfn/mcpfn/adapters/workers"
	"github.com/mcpfn/mcpfn/core"
)

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

// CountArgs are the arguments of the count tool.
type CountArgs struct {
	To int `json:"to" jsonschema:"description=Count from 1 to this (at most 20),minimum=1,maximum=20"`
}

// count reports each number as progress, a few milliseconds apart: the
// client sees them as they happen (an SSE stream).
func count(ctx context.Context, req *core.CallToolRequest, in CountArgs) (string, error) {
	for i := 1; i <= in.To; i++ {
		req.NotifyProgress(ctx, float64(i), float64(in.To), fmt.Sprintf("%d", i))
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return fmt.Sprintf("counted to %d", in.To), nil
}

// ReportArgs are the arguments of the report tool.
type ReportArgs struct {
	Topic string `json:"topic" jsonschema:"description=What to report on"`
}

// report is a tool that runs as a task when the client declares the tasks
// extension: the call answers at once with a task, and the report is made
// in a request of its own, started by the task's Durable Object.
func report(ctx context.Context, req *core.CallToolRequest, in ReportArgs) (string, error) {
	req.NotifyProgress(ctx, 0, 1, "gathering "+in.Topic)
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return "a report on " + in.Topic, nil
}

func main() {
	// Sessions, tasks and task runs in Durable Objects (MCPFN_STATE,
	// MCPFN_TASKS), request-state keys from the MCPFN_STATE_KEY secret.
	srv := core.NewServer(core.Implementation{Name: "workers-example", Version: "1.0.0"}, workers.ServerOptions(nil))
	core.AddTool(srv, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	core.AddTool(srv, &core.Tool{Name: "count", Description: "Count, reporting progress."}, count)
	core.AddTool(srv, &core.Tool{Name: "report", Description: "Write a report (a task)."}, report,
		&core.ToolOptions{TaskSupport: core.TaskOptional})
	workers.Serve(srv, nil)
}
