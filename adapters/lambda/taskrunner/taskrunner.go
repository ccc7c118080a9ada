// Package taskrunner runs the tasks of an MCP server on AWS Lambda: each
// task runs in an asynchronous invocation of the function itself (the Lambda
// Invoke API with InvocationType Event), so that it outlives the invocation
// that created it, which Lambda freezes once its response is sent.
//
// A [Runner] is the server's task runner (core.ServerOptions.TaskRunner).
// When the server creates a task, it stores the task's record and calls the
// runner, which sends the function an event that names the task and nothing
// else (lambda.TaskEvent: {"mcpfnTask":{"taskId":"..."}}); Lambda answers 202
// once the event is queued. adapters/lambda recognises the event in the
// invocation that Lambda then starts, on whichever instance, and hands it to
// the server, which runs the task if its record says it is still to run and
// no other invocation holds its lease, and records the outcome in the store.
// The store must therefore be shared by every instance (store/dynamo).
//
// The function needs lambda:InvokeFunction on itself (the mcp-lambda
// Terraform module grants it with tasks = true, which also sets
// MCPFN_TASK_RUNNER=lambda for deploy/lambdaenv, the kit that builds the
// runner from the environment).
//
// This package is a module of its own so that the AWS SDK's Lambda client
// reaches only the functions that run tasks this way: neither core nor
// adapters/lambda requires it.
package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/core"
)

// Invoker is the method of the AWS SDK's Lambda client (*lambda.Client of
// github.com/aws/aws-sdk-go-v2/service/lambda) that the runner uses.
type Invoker interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, optFns ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// DefaultTimeout bounds one start of a task (the Invoke call and the SDK's
// retries) when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Options configures [New]. A nil *Options means the zero value.
type Options struct {
	// Qualifier is the version or alias of the function to invoke. The
	// zero value, "", invokes the unqualified function ($LATEST), which is
	// what a grant of lambda:InvokeFunction on the function's ARN allows;
	// a qualified invocation needs the grant on "<arn>:*" or the alias.
	Qualifier string

	// Timeout bounds each start of a task: the Invoke call, with the
	// retries of the client's retryer (the SDK's standard retryer tries
	// three times, backing off, on throttling and server errors). Zero
	// means DefaultTimeout.
	Timeout time.Duration
}

// Runner starts tasks by asynchronous invocations of a Lambda function: it
// is a core.TaskRunner. It is safe for concurrent use.
type Runner struct {
	client   Invoker
	function string
	opts     Options
}

var _ core.TaskRunner = (*Runner)(nil)

// New returns a runner that invokes the function named function (a name,
// partial ARN or ARN; on Lambda, AWS_LAMBDA_FUNCTION_NAME of the function
// itself) with client. It returns an error if client is nil or function is
// empty.
func New(client Invoker, function string, opts *Options) (*Runner, error) {
	if client == nil {
		return nil, errors.New("taskrunner: nil Lambda client")
	}
	if function == "" {
		return nil, errors.New("taskrunner: no function name (on Lambda: AWS_LAMBDA_FUNCTION_NAME)")
	}
	r := &Runner{client: client, function: function}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Timeout <= 0 {
		r.opts.Timeout = DefaultTimeout
	}
	return r, nil
}

// Start queues an asynchronous invocation of the function that runs the
// task taskID, and returns once Lambda has accepted it (202). The call is
// detached from ctx's cancellation (the request that created the task may
// end first) but keeps its values, and is bounded by Options.Timeout. It
// returns an error if the task id cannot be sent (see lambda.TaskEvent) or
// Lambda did not accept the invocation after the client's retries (the
// error names the task by the first 8 bytes of its id only); the task then
// never runs, and the caller must record it as failed (core does, and
// logs the error).
func (r *Runner) Start(ctx context.Context, taskID string) error {
	payload, err := lambda.TaskEvent(taskID)
	if err != nil {
		return fmt.Errorf("taskrunner: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.Timeout)
	defer cancel()
	in := &awslambda.InvokeInput{
		FunctionName:   aws.String(r.function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	}
	if r.opts.Qualifier != "" {
		in.Qualifier = aws.String(r.opts.Qualifier)
	}
	out, err := r.client.Invoke(ctx, in)
	if err == nil && out.StatusCode != http.StatusAccepted {
		err = fmt.Errorf("Lambda answered %d, want 202", out.StatusCode)
	}
	if err != nil {
		// The error names the task by a prefix of its id only, as core's
		// logs do: the caller logs it, and a task id is a handle.
		return fmt.Errorf("taskrunner: invoking %s for task %s: %w", r.function, idPrefix(taskID), err)
	}
	return nil
}

func idPrefix(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
