package lambdaenv

import (
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
)

// lambdaTaskRunner returns the task runner that MCPFN_TASK_RUNNER=lambda
// selects: each task runs in an asynchronous invocation of this function,
// named by AWS_LAMBDA_FUNCTION_NAME (set by Lambda), through a Lambda client
// of awsCfg whose endpoint AWS_ENDPOINT_URL_LAMBDA (else AWS_ENDPOINT_URL)
// overrides, for tests. The invocation is unqualified, which is what the
// mcp-lambda module's grant (lambda:InvokeFunction on the function's ARN)
// allows. The error names the variable that is missing.
func lambdaTaskRunner(awsCfg aws.Config) (core.TaskRunner, error) {
	name := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if name == "" {
		return nil, errors.New("MCPFN_TASK_RUNNER=lambda: AWS_LAMBDA_FUNCTION_NAME is not set (Lambda sets it to the function's name)")
	}
	client := awslambda.NewFromConfig(awsCfg, func(o *awslambda.Options) {
		if u := endpoint("AWS_ENDPOINT_URL_LAMBDA"); u != "" {
			o.BaseEndpoint = &u
		}
	})
	return taskrunner.New(client, name, nil)
}
