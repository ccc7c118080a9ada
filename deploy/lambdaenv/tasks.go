package lambdaenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
)

// Values of MCPFN_TASK_RUNNER.
const (
	taskRunnerInProcess = "inprocess"
	taskRunnerLambda    = "lambda"
	taskRunnerNone      = "none"
)

// onLambda reports whether the process is a Lambda function: Lambda sets
// AWS_LAMBDA_FUNCTION_NAME (the name the Lambda runner invokes), and so do
// its emulators. A process elsewhere that uses the kit (a net/http server
// configured by the same variables) keeps running after a response.
func onLambda() bool { return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" }

// taskRunnerKind parses MCPFN_TASK_RUNNER: "inprocess" is the in-process
// runner, "lambda" the asynchronous invocation of the function itself,
// which needs the shared task store (MCPFN_DYNAMODB_TABLE: the invocation
// that runs a task reads it from there) and the function's name
// (AWS_LAMBDA_FUNCTION_NAME, which Lambda sets), "none" says the
// deployment runs no tasks (the in-process runner, and Start refuses task
// tools). Unset, it is lambda on Lambda with the table, since Lambda
// freezes the invocation that created a task once its response is sent;
// otherwise inprocess (Start then refuses task tools on Lambda).
func taskRunnerKind(table string) (string, error) {
	switch v := os.Getenv("MCPFN_TASK_RUNNER"); v {
	case "":
		if onLambda() && table != "" {
			return taskRunnerLambda, nil
		}
		return taskRunnerInProcess, nil
	case taskRunnerInProcess, taskRunnerNone:
		return v, nil
	case taskRunnerLambda:
		if table == "" {
			return "", errors.New("MCPFN_TASK_RUNNER=lambda needs MCPFN_DYNAMODB_TABLE: the invocation that runs a task reads it from the shared store")
		}
		if !onLambda() {
			return "", errors.New("MCPFN_TASK_RUNNER=lambda needs AWS_LAMBDA_FUNCTION_NAME (Lambda sets it): the function invokes itself")
		}
		return taskRunnerLambda, nil
	default:
		return "", fmt.Errorf("MCPFN_TASK_RUNNER: %q is not lambda, inprocess or none", v)
	}
}

// checkTasks returns the error Start ends the function with when srv has
// task tools that this deployment cannot run safely, naming the fix: where
// kind is none (the mcp-lambda module's tasks = false), and on Lambda
// where tasks would run in the invocation that created them (frozen once
// its response is sent, then failed when their lease passes) or live in
// the instance's memory (another instance answers -32602 "unknown task",
// against tasks.md §Task Creation). A refusal at init rather than a
// logged error: the kit stops a function whose configuration would only
// half work (docs/deploying.md, "Safe defaults on many instances").
func checkTasks(srv *core.Server, kind string) error {
	if !srv.ServesTasks() {
		return nil
	}
	if kind == taskRunnerNone {
		return errors.New("MCPFN_TASK_RUNNER=none says this deployment runs no tasks, but the server has task tools " +
			"(ToolOptions.TaskSupport): set tasks = true in the mcp-lambda Terraform module (MCPFN_TASK_RUNNER=lambda, " +
			"and the grant to invoke the function), or MCPFN_TASK_RUNNER=lambda yourself")
	}
	if !onLambda() {
		return nil
	}
	switch {
	case srv.PerProcessTasks():
		return errors.New("the server has task tools (ToolOptions.TaskSupport), but MCPFN_DYNAMODB_TABLE is not set: on Lambda " +
			"a task cannot run in the invocation that created it, which Lambda freezes once the response is sent, and must be " +
			"readable from every instance; set MCPFN_DYNAMODB_TABLE (tasks then run in an asynchronous invocation of the " +
			"function, which reads them from the table): the mcp-lambda Terraform module sets it, with tasks = true for the " +
			"grant to invoke the function")
	case srv.InProcessTaskRunner():
		return errors.New("MCPFN_TASK_RUNNER=inprocess would run each task in the invocation that created it, which Lambda " +
			"freezes once the response is sent: the task stops mid-run and fails once its lease passes; unset it (on Lambda " +
			"the default is lambda: an asynchronous invocation of the function) or set lambda, with the grant to invoke " +
			"the function (the mcp-lambda Terraform module's tasks = true)")
	}
	return nil
}

// taskRunner returns the TaskRunner of kind: nil (the server's in-process
// runner) for inprocess. It is the one place that picks the runner.
func taskRunner(ctx context.Context, kind string, awsCfg aws.Config, log *slog.Logger) (core.TaskRunner, error) {
	switch kind {
	case taskRunnerLambda:
		return newLambdaTaskRunner(ctx, awsCfg, os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), log)
	default:
		return nil, nil
	}
}

// newLambdaTaskRunner returns the Lambda task runner (module
// adapters/lambda/taskrunner): an asynchronous Invoke (InvocationType
// Event) of the function itself, unqualified (what the mcp-lambda module's
// grant, lambda:InvokeFunction on the function's ARN, allows), for each
// task, through a Lambda client of awsCfg whose endpoint
// AWS_ENDPOINT_URL_LAMBDA (else AWS_ENDPOINT_URL) overrides, for tests.
// core logs a start that fails (and fails the task).
func newLambdaTaskRunner(_ context.Context, awsCfg aws.Config, function string, _ *slog.Logger) (core.TaskRunner, error) {
	client := awslambda.NewFromConfig(awsCfg, func(o *awslambda.Options) {
		if u := endpoint("AWS_ENDPOINT_URL_LAMBDA"); u != "" {
			o.BaseEndpoint = &u
		}
	})
	r, err := taskrunner.New(client, function, nil)
	if err != nil {
		return nil, fmt.Errorf("MCPFN_TASK_RUNNER=lambda: %w", err)
	}
	return r, nil
}
