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
//
// What the kit does not wire yet is built here the way the kit does: the
// runner (AWS_LAMBDA_FUNCTION_NAME, AWS_ENDPOINT_URL_LAMBDA) and, with
// MCPFN_DYNAMODB_TABLE, the store/dynamo TaskStore on the session table.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	adapter "github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
	"github.com/mcpfn/mcpfn/store/dynamo"
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
	if table := os.Getenv("MCPFN_DYNAMODB_TABLE"); table != "" && cfg.Server.TaskStore == nil {
		// The kit keeps legacy sessions in the table; tasks go there too.
		awsCfg, err := lambdaenv.LambdaAWSConfig(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskfn:", err)
			os.Exit(1)
		}
		db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
			if u := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); u != "" {
				o.BaseEndpoint = &u
			}
		})
		if cfg.Server.TaskStore, err = dynamo.NewTaskStore(db, &dynamo.Options{TableName: table, Logger: cfg.Server.Logger}); err != nil {
			fmt.Fprintln(os.Stderr, "taskfn:", err)
			os.Exit(1)
		}
	}
	if os.Getenv("TASKFN_REQUIRE_SHARED") == "1" && cfg.Server.TaskStore == nil {
		fmt.Fprintln(os.Stderr, "taskfn: TASKFN_REQUIRE_SHARED=1, but tasks would be kept in memory (MCPFN_DYNAMODB_TABLE is not set)")
		os.Exit(1)
	}
	if cfg.Server.TaskRunner == nil {
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
		cfg.Server.TaskRunner, err = taskrunner.New(client, os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "taskfn:", err)
			os.Exit(1)
		}
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
