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
)

// taskRunnerKind parses MCPFN_TASK_RUNNER: "" and "inprocess" are the
// in-process runner, "lambda" the asynchronous invocation of the function
// itself, which needs the shared task store (MCPFN_DYNAMODB_TABLE: the
// invocation that runs a task reads it from there) and the function's name
// (AWS_LAMBDA_FUNCTION_NAME, which Lambda sets).
func taskRunnerKind(table string) (string, error) {
	switch v := os.Getenv("MCPFN_TASK_RUNNER"); v {
	case "", taskRunnerInProcess:
		return taskRunnerInProcess, nil
	case taskRunnerLambda:
		if table == "" {
			return "", errors.New("MCPFN_TASK_RUNNER=lambda needs MCPFN_DYNAMODB_TABLE: the invocation that runs a task reads it from the shared store")
		}
		if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") == "" {
			return "", errors.New("MCPFN_TASK_RUNNER=lambda needs AWS_LAMBDA_FUNCTION_NAME (Lambda sets it): the function invokes itself")
		}
		return taskRunnerLambda, nil
	default:
		return "", fmt.Errorf("MCPFN_TASK_RUNNER: %q is not inprocess or lambda", v)
	}
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
