package lambdaenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

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

// newLambdaTaskRunner is the seam for the Lambda task runner (module
// adapters/lambda/taskrunner): an asynchronous Invoke (InvocationType
// Event) of the function itself for each task. Until that module is part
// of the build, MCPFN_TASK_RUNNER=lambda is refused with an error saying
// so, rather than running tasks in an invocation that Lambda freezes once
// its response is sent. Its body becomes
//
//	client := awslambda.NewFromConfig(awsCfg, func(o *awslambda.Options) {
//		if u := endpoint("AWS_ENDPOINT_URL_LAMBDA"); u != "" {
//			o.BaseEndpoint = &u
//		}
//	})
//	return taskrunner.New(client, function, &taskrunner.Options{Logger: log})
func newLambdaTaskRunner(_ context.Context, _ aws.Config, _ string, _ *slog.Logger) (core.TaskRunner, error) {
	return nil, errors.New("MCPFN_TASK_RUNNER=lambda: this build of deploy/lambdaenv has no Lambda task runner (adapters/lambda/taskrunner)")
}
