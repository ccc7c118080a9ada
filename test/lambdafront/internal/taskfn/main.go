// Command taskfn is the Lambda function of the task tests: an MCP server
// configured by deploy/lambdaenv (MCPFN_* variables), whose tools run as
// tasks of the Tasks extension, each in an asynchronous invocation of the
// function itself (adapters/lambda/taskrunner), built as a bootstrap for
// the provided.al2023 runtime (go build -tags lambda.norpc).
//
// Tools (every one TaskRequired; each reports to the hook, when set, as it
// starts: GET $TASKFN_HOOK_URL/started?tool=NAME&task=ID&pid=PID):
//
//	work {"text":T}  returns "done: T (pid PID)"
//	ask              asks for a confirmation (elicitation), then returns
//	                 "answered: ACTION VALUE (pid PID)"
//	wait             returns when its context ends (a cancellation)
//	hang             never returns, whatever its context says: the
//	                 invocation times out and the sandbox is killed
//
// Environment besides the kit's:
//
//	TASKFN_HOOK_URL  where the tools report
//	TASKFN_LEASE     core.ServerOptions.TaskLease (a Go duration)
//	TASKFN_POLL      core.ServerOptions.TaskPollInterval
//	TASKFN_REQUIRE_SHARED=1  exit at init unless the kit gave a shared
//	                 TaskStore (store/dynamo, from MCPFN_DYNAMODB_TABLE)
//	TASKFN_LAMBDA_RUNNER=1   build the Lambda runner here (tasks in memory)
//
// With MCPFN_TASK_RUNNER=lambda and MCPFN_DYNAMODB_TABLE the kit wires the
// Lambda runner and the store/dynamo TaskStore. The kit refuses the Lambda
// runner with tasks in memory (no table); TASKFN_LAMBDA_RUNNER=1 builds it
// here for that case, in which one sandbox holds the tasks.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	adapter "github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

type workArgs struct {
	Text string `json:"text"`
}

func main() {
	ctx := context.Background()
	cfg, err := lambdaenv.Load(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskfn:", err)
		os.Exit(1)
	}
	for name, d := range map[string]*time.Duration{"TASKFN_LEASE": &cfg.Server.TaskLease, "TASKFN_POLL": &cfg.Server.TaskPollInterval} {
		if v := os.Getenv(name); v != "" {
			if *d, err = time.ParseDuration(v); err != nil {
				fmt.Fprintln(os.Stderr, "taskfn:", name, err)
				os.Exit(1)
			}
		}
	}
	if os.Getenv("TASKFN_LAMBDA_RUNNER") == "1" {
		// The kit refuses MCPFN_TASK_RUNNER=lambda without a shared
		// store; with tasks in this process's memory, build the same
		// runner here.
		awsCfg, err := lambdaenv.LambdaAWSConfig(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskfn:", err)
			os.Exit(1)
		}
		client := lambda.NewFromConfig(awsCfg, func(o *lambda.Options) {
			if u := os.Getenv("AWS_ENDPOINT_URL_LAMBDA"); u != "" {
				o.BaseEndpoint = &u
			}
		})
		if cfg.Server.TaskRunner, err = taskrunner.New(client, os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), nil); err != nil {
			fmt.Fprintln(os.Stderr, "taskfn:", err)
			os.Exit(1)
		}
	}
	if _, ok := cfg.Server.TaskRunner.(*taskrunner.Runner); !ok {
		fmt.Fprintf(os.Stderr, "taskfn: the task runner is %T, not the Lambda runner (set MCPFN_TASK_RUNNER=lambda with MCPFN_DYNAMODB_TABLE, or TASKFN_LAMBDA_RUNNER=1)\n", cfg.Server.TaskRunner)
		os.Exit(1)
	}
	if os.Getenv("TASKFN_REQUIRE_SHARED") == "1" && cfg.Server.TaskStore == nil {
		fmt.Fprintln(os.Stderr, "taskfn: TASKFN_REQUIRE_SHARED=1, but tasks would be kept in memory (MCPFN_DYNAMODB_TABLE is not set)")
		os.Exit(1)
	}
	srv := core.NewServer(core.Implementation{Name: "taskfn", Version: "1.0.0"}, cfg.Server)
	task := &core.ToolOptions{TaskSupport: core.TaskRequired}
	hook := os.Getenv("TASKFN_HOOK_URL")
	hc := &http.Client{Timeout: 5 * time.Second}
	started := func(ctx context.Context, req *core.CallToolRequest) {
		if hook == "" {
			return
		}
		q := url.Values{"tool": {req.Params.Name}, "task": {req.TaskID()}, "pid": {fmt.Sprint(os.Getpid())}}
		r, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, hook+"/started?"+q.Encode(), nil)
		if err != nil {
			return
		}
		if res, err := hc.Do(r); err == nil {
			res.Body.Close()
		}
	}
	core.AddTool(srv, &core.Tool{Name: "work", Description: "Returns its text, as a task."},
		func(ctx context.Context, req *core.CallToolRequest, in workArgs) (string, error) {
			started(ctx, req)
			return fmt.Sprintf("done: %s (pid %d)", in.Text, os.Getpid()), nil
		}, task)
	core.AddTool(srv, &core.Tool{Name: "wait", Description: "Waits until cancelled."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			started(ctx, req)
			<-ctx.Done()
			return "", ctx.Err()
		}, task)
	confirmForm := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)
	core.AddTool(srv, &core.Tool{Name: "ask", Description: "Asks for a confirmation, then answers."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			started(ctx, req)
			r, ok := req.Input.Elicitation("confirm")
			if !ok {
				return "", core.InputRequired(core.InputRequests{"confirm": core.ElicitForm("Proceed?", confirmForm)}, "")
			}
			return fmt.Sprintf("answered: %s %v (pid %d)", r.Action, r.Content["confirm"], os.Getpid()), nil
		}, task)
	core.AddTool(srv, &core.Tool{Name: "hang", Description: "Never returns."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			started(ctx, req)
			time.Sleep(time.Hour) // ignores its context on purpose: the sandbox is killed
			return "", nil
		}, task)
	adapter.Start(srv, cfg.Lambda)
}
