package taskrunner_test

import (
	"context"
	"log"
	"os"

	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/mcpfn/mcpfn/adapters/lambda"
	"github.com/mcpfn/mcpfn/adapters/lambda/taskrunner"
	"github.com/mcpfn/mcpfn/core"
)

// A Lambda function whose tasks run in asynchronous invocations of itself,
// wired by hand (deploy/lambdaenv does this with MCPFN_TASK_RUNNER=lambda).
// The task store must be shared by every instance: store/dynamo's
// TaskStore on the session table.
func Example() {
	var awsCfg aws.Config    // the function's region and role credentials
	var tasks core.TaskStore // dynamo.NewTaskStore(dynamodb.NewFromConfig(awsCfg), &dynamo.Options{TableName: ...})

	runner, err := taskrunner.New(awslambda.NewFromConfig(awsCfg), os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(core.Implementation{Name: "jobs", Version: "1.0.0"}, &core.ServerOptions{TaskRunner: runner, TaskStore: tasks})
	core.AddTool(srv, &core.Tool{Name: "report", Description: "Builds the monthly report."},
		func(ctx context.Context, req *core.CallToolRequest, _ struct{}) (string, error) {
			return "report ready", nil // runs in the task's own invocation
		}, &core.ToolOptions{TaskSupport: core.TaskRequired})
	lambda.Start(srv, nil)
}
