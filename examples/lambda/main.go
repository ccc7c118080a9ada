// Command lambda is the calculator MCP server as an AWS Lambda function, for
// the provided.al2023 runtime, behind a Function URL or API Gateway.
//
// Build the deployment packages (one zip per architecture, each holding the
// bootstrap executable):
//
//	examples/lambda/build.sh              # build/lambda-arm64.zip and build/lambda-amd64.zip
//	examples/lambda/build.sh arm64        # one architecture
//
// which runs, per architecture,
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap .
//
// and zips the bootstrap (with a small Go program: no zip tool needed).
// infra/terraform/modules/mcp-lambda deploys it with everything it needs.
//
// The environment that module sets configures the function through the
// public deploy kit, github.com/mcpfn/mcpfn/deploy/lambdaenv (its package
// documentation lists every variable): MCPFN_DYNAMODB_TABLE (sessions of
// legacy clients, shared by all instances), MCPFN_KEYS_SECRET_ID (the
// Secrets Manager secret whose keys seal multi round-trip state),
// MCPFN_ALLOWED_ORIGINS, MCPFN_LOG_LEVEL, MCPFN_AUTH_*, and
// MCPFN_STREAMING=1 for a Function URL in RESPONSE_STREAM mode or a REST API
// with a streaming integration; leave it unset for buffered integrations.
package main

import (
	"context"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/lambdaenv"
)

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func main() {
	lambdaenv.Start(core.Implementation{Name: "calculator", Version: "2.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	})
}
