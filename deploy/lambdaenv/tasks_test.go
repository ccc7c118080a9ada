package lambdaenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

// TestTaskRunnerDefault: without MCPFN_TASK_RUNNER, a function on Lambda
// (AWS_LAMBDA_FUNCTION_NAME set) with the shared table gets the Lambda
// runner, since Lambda freezes the invocation that created a task; a
// process elsewhere (a net/http server configured by the kit) keeps the
// in-process runner, and so does a function without a table (Start then
// refuses task tools). Explicit values win.
func TestTaskRunnerDefault(t *testing.T) {
	for name, c := range map[string]struct {
		kv     []string
		lambda bool // want the Lambda runner; else nil, the in-process runner
	}{
		"on lambda":                        {[]string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn", "MCPFN_DYNAMODB_TABLE", "sessions"}, true},
		"on lambda, no table":              {[]string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn"}, false},
		"on lambda, inprocess":             {[]string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn", "MCPFN_DYNAMODB_TABLE", "sessions", "MCPFN_TASK_RUNNER", "inprocess"}, false},
		"on lambda, none":                  {[]string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn", "MCPFN_DYNAMODB_TABLE", "sessions", "MCPFN_TASK_RUNNER", "none"}, false},
		"elsewhere":                        {[]string{"MCPFN_DYNAMODB_TABLE", "sessions"}, false},
		"elsewhere, none":                  {[]string{"MCPFN_TASK_RUNNER", "none"}, false},
		"on lambda, lambda (the explicit)": {[]string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn", "MCPFN_DYNAMODB_TABLE", "sessions", "MCPFN_TASK_RUNNER", "lambda"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, c.kv...)
			cfg, err := lambdaenv.Load(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, isLambda := cfg.Server.TaskRunner.(*taskrunner.Runner)
			if isLambda != c.lambda || (!c.lambda && cfg.Server.TaskRunner != nil) {
				t.Errorf("TaskRunner = %T, want the Lambda runner: %v", cfg.Server.TaskRunner, c.lambda)
			}
		})
	}
}

// TestTaskClaimTimeout: MCPFN_TASK_CLAIM_TIMEOUT is a Go duration or whole
// seconds (what the mcp-lambda module's task_claim_timeout gives), and
// unset leaves core's default.
func TestTaskClaimTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "90": 90 * time.Second, "2m30s": 150 * time.Second, "21600": 6 * time.Hour} {
		setenv(t, "MCPFN_TASK_CLAIM_TIMEOUT", v)
		cfg, err := lambdaenv.Load(t.Context(), nil)
		if err != nil || cfg.Server.TaskClaimTimeout != want {
			t.Errorf("MCPFN_TASK_CLAIM_TIMEOUT=%q: %v, TaskClaimTimeout %v; want %v", v, err, cfg.Server.TaskClaimTimeout, want)
		}
	}
}

// TestStartRefusesUnsafeTasks: Start (up to lambda.Start) refuses, with
// an error naming the fix, a server with task tools that the deployment
// cannot run safely: on Lambda, tasks in the invocation that created them
// (frozen after the response) or in the instance's memory; anywhere, task
// tools where MCPFN_TASK_RUNNER=none (the module's tasks = false) says
// there are none. A server without task tools, and a process that is not
// on Lambda, start as before.
func TestStartRefusesUnsafeTasks(t *testing.T) {
	onLambda := []string{"AWS_LAMBDA_FUNCTION_NAME", "my-fn"}
	table := []string{"MCPFN_DYNAMODB_TABLE", "sessions"}
	with := func(kvs ...[]string) (out []string) {
		for _, kv := range kvs {
			out = append(out, kv...)
		}
		return out
	}
	for name, c := range map[string]struct {
		kv    []string
		tasks bool
		want  []string // nil: Start goes on
	}{
		"on lambda, no table": {with(onLambda), true,
			[]string{"MCPFN_DYNAMODB_TABLE", "freezes", "asynchronous invocation", "tasks = true"}},
		"on lambda, inprocess": {with(onLambda, table, []string{"MCPFN_TASK_RUNNER", "inprocess"}), true,
			[]string{"MCPFN_TASK_RUNNER=inprocess", "freezes", "tasks = true"}},
		"none": {with(onLambda, table, []string{"MCPFN_TASK_RUNNER", "none"}), true,
			[]string{"MCPFN_TASK_RUNNER=none", "tasks = true"}},
		"none elsewhere": {[]string{"MCPFN_TASK_RUNNER", "none"}, true,
			[]string{"MCPFN_TASK_RUNNER=none"}},
		"on lambda, the default":          {with(onLambda, table), true, nil},
		"on lambda, no table, no tasks":   {with(onLambda), false, nil},
		"on lambda, inprocess, no tasks":  {with(onLambda, table, []string{"MCPFN_TASK_RUNNER", "inprocess"}), false, nil},
		"none, no tasks":                  {with(onLambda, table, []string{"MCPFN_TASK_RUNNER", "none"}), false, nil},
		"elsewhere, tasks in memory":      {nil, true, nil},
		"elsewhere, the table, inprocess": {with(table, []string{"MCPFN_TASK_RUNNER", "inprocess"}), true, nil},
	} {
		t.Run(name, func(t *testing.T) {
			setenv(t, c.kv...)
			srv, lopts, err := lambdaenv.NewServer(t.Context(), core.Implementation{Name: "calc", Version: "1.0.0"}, func(s *core.Server) {
				core.AddTool(s, &core.Tool{Name: "add"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil })
				if c.tasks {
					core.AddTool(s, &core.Tool{Name: "job"}, func(context.Context, *core.CallToolRequest, struct{}) (string, error) { return "", nil },
						&core.ToolOptions{TaskSupport: core.TaskRequired})
				}
			}, nil)
			if c.want == nil {
				if err != nil || srv == nil || lopts == nil {
					t.Fatalf("Start refuses: %v", err)
				}
				srv.Close()
				return
			}
			if err == nil {
				srv.Close()
				t.Fatalf("Start accepted a server whose tasks cannot run safely here")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
		})
	}
}
