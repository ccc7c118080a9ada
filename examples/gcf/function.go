// Package calculator is the calculator MCP server as a Google Cloud Function
// (2nd gen, HTTP trigger), with the Functions Framework for Go: init
// registers the function MCP, which serves the MCP endpoint at "/".
//
// Run it locally through the framework's own server (see cmd/main.go):
//
//	FUNCTION_TARGET=MCP LOCAL_ONLY=true PORT=8080 go run ./examples/gcf/cmd   # http://127.0.0.1:8080/
//
// Deploy it from a directory holding this package at the root of its own
// module (Cloud Functions build the module in the uploaded directory): copy
// function.go, run `go mod init example.com/calculator && go mod tidy`, then
//
//	gcloud functions deploy calculator --gen2 --runtime=go126 --trigger-http \
//	    --entry-point=MCP --region=REGION --source=.
//
// It imports only public packages, so the copied file builds on its own. The
// environment configures it through the public deploy kit,
// github.com/mcpfn/mcpfn/deploy/gcfenv (its package documentation lists
// every variable): the signing key MCPFN_STATE_KEY (which the mcp-gcf
// Terraform module fills from Secret Manager: Cloud Functions run many
// instances, and multi round-trip state must survive a change of instance),
// MCPFN_ALLOWED_ORIGINS, MCPFN_AUTH_* and MCPFN_LOG_LEVEL.
package calculator

import (
	"context"

	"github.com/mcpfn/mcpfn/core"
	"github.com/mcpfn/mcpfn/deploy/gcfenv"
)

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	Left  int `json:"left" jsonschema:"description=The first addend"`
	Right int `json:"right" jsonschema:"description=The second addend"`
}

func add(ctx context.Context, req *core.CallToolRequest, in AddArgs) (int, error) {
	return in.Left + in.Right, nil
}

func init() {
	gcfenv.Start("MCP", core.Implementation{Name: "calculator", Version: "2.0.0"}, func(s *core.Server) {
		core.AddTool(s, &core.Tool{Name: "add", Description: "Add two numbers."}, add)
	})
}
